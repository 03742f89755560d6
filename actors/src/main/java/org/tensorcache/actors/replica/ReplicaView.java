package org.tensorcache.actors.replica;

import java.util.Arrays;
import org.tensorcache.actors.cache.CacheRegistry;
import org.tensorcache.actors.cache.CacheRegistry.Registered;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Immutable per-range blocks, published by one actor and read by any thread: a lookup on this node
 * is a memory gather on the caller's thread, with no mailbox in between. A published block is
 * replaced, never mutated. The blocks live in the node's {@link CacheRegistry}.
 */
public final class ReplicaView {
  private static final int[] NONE = new int[0];
  private final CacheRegistry registry;

  /** The view of the caches in {@code registry}. */
  public ReplicaView(CacheRegistry registry) {
    this.registry = registry;
  }

  /** Publishes {@code block} as the current view of its range; the caller must not mutate it. */
  public void publish(String cacheId, Block block) {
    registry.get(cacheId).blocks().setRelease(block.range(), block);
  }

  /** The current block of a range, or null when nothing of it has arrived yet. */
  public Block block(String cacheId, int range) {
    return registry.get(cacheId).blocks().get(range);
  }

  /** The spec of a registered cache. */
  public CacheSpec spec(String cacheId) {
    return registry.definition(cacheId).spec();
  }

  /**
   * Copies the values of {@code indices} into {@code out} (per field, {@code indices.length *
   * width} floats in request order) and returns the positions that were missing (an empty array
   * when none was). An index out of {@code [0, n)} is an {@link IllegalArgumentException} that
   * names it.
   */
  public int[] gather(String cacheId, long[] indices, float[][] out) {
    Registered e = registry.get(cacheId);
    long n = e.definition().spec().n();
    int[] missing = NONE;
    int missingCount = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (index < 0 || index >= n) {
        throw new IllegalArgumentException(
            String.format("index %d out of range [0, %d) for cache '%s'", index, n, cacheId));
      }
      // acquire pairs with publish's release: a block is seen whole (a volatile read costs more)
      Block block = e.blocks().getAcquire(e.rangeOf(index));
      if (block == null || !block.gather(index, out, i)) {
        if (missingCount == missing.length) {
          missing = Arrays.copyOf(missing, Math.max(8, Math.min(indices.length, missingCount * 2)));
        }
        missing[missingCount++] = i;
      }
    }
    return missingCount == missing.length ? missing : Arrays.copyOf(missing, missingCount);
  }
}
