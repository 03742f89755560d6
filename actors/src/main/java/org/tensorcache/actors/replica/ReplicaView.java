package org.tensorcache.actors.replica;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.BlockGather;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Immutable per-range blocks, published by one actor and read by any thread: a lookup on this node
 * is a memory gather on the caller's thread, with no mailbox in between. A published block is
 * replaced, never mutated.
 */
public final class ReplicaView {
  private final Map<String, Entry> caches = new ConcurrentHashMap<>();

  private record Entry(CacheSpec spec, PublishedBlocks blocks) {}

  /** Adds an empty view of a cache. */
  public void register(CacheSpec spec, String cacheId) {
    caches.putIfAbsent(cacheId, new Entry(spec, new PublishedBlocks(spec.rangeCount())));
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
    // publish's release pairs with the acquire reads there: each block is seen whole
    return BlockGather.gather(e.spec, e.blocks, cacheId, indices, out);
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
