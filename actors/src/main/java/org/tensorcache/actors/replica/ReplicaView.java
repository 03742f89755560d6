package org.tensorcache.actors.replica;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Immutable per-range blocks, published by one actor and read by any thread: a lookup on this node
 * is a memory gather on the caller's thread, with no mailbox in between. A published block is
 * replaced, never mutated.
 */
public final class ReplicaView {
  private static final int[] NONE = new int[0];
  private final Map<String, Entry> caches = new ConcurrentHashMap<>();

  /** {@code shift} is log2 of the range size when it is a power of two, else -1. */
  private record Entry(CacheSpec spec, AtomicReferenceArray<Block> blocks, int shift) {
    int rangeOf(long index) {
      // a 64-bit division costs more than the rest of a gather: shift where we can
      return shift >= 0 ? (int) (index >>> shift) : (int) (index / spec.rangeSize());
    }
  }

  /** Adds an empty view of a cache. */
  public void register(CacheSpec spec, String cacheId) {
    int size = spec.rangeSize();
    int shift = Integer.bitCount(size) == 1 ? Integer.numberOfTrailingZeros(size) : -1;
    caches.putIfAbsent(
        cacheId, new Entry(spec, new AtomicReferenceArray<>(spec.rangeCount()), shift));
  }

  /** Publishes {@code block} as the current view of its range; the caller must not mutate it. */
  public void publish(String cacheId, Block block) {
    entry(cacheId).blocks.setRelease(block.range(), block);
  }

  /** The current block of a range, or null when nothing of it has arrived yet. */
  public Block block(String cacheId, int range) {
    return entry(cacheId).blocks.get(range);
  }

  /** The spec of a registered cache. */
  public CacheSpec spec(String cacheId) {
    return entry(cacheId).spec;
  }

  /**
   * Copies the values of {@code indices} into {@code out} (per field, {@code indices.length *
   * width} floats in request order) and returns the positions that were missing (an empty array
   * when none was). An index out of {@code [0, n)} is an {@link IllegalArgumentException} that
   * names it.
   */
  public int[] gather(String cacheId, long[] indices, float[][] out) {
    Entry e = entry(cacheId);
    long n = e.spec.n();
    int[] missing = NONE;
    int missingCount = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (index < 0 || index >= n) {
        throw new IllegalArgumentException(
            String.format("index %d out of range [0, %d) for cache '%s'", index, n, cacheId));
      }
      // acquire pairs with publish's release: a block is seen whole (a volatile read costs more)
      Block block = e.blocks.getAcquire(e.rangeOf(index));
      if (block == null || !block.gather(index, out, i)) {
        if (missingCount == missing.length) {
          missing = Arrays.copyOf(missing, Math.max(8, Math.min(indices.length, missingCount * 2)));
        }
        missing[missingCount++] = i;
      }
    }
    return missingCount == missing.length ? missing : Arrays.copyOf(missing, missingCount);
  }

  private Entry entry(String cacheId) {
    Entry e = caches.get(cacheId);
    if (e == null) {
      throw new IllegalArgumentException(
          "unknown cache '" + cacheId + "', expected one of " + caches.keySet());
    }
    return e;
  }
}
