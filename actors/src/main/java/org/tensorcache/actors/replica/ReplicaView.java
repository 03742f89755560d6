package org.tensorcache.actors.replica;

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
  private final Map<String, Entry> caches = new ConcurrentHashMap<>();

  private record Entry(CacheSpec spec, AtomicReferenceArray<Block> blocks) {}

  /** Adds an empty view of a cache. */
  public void register(CacheSpec spec, String cacheId) {
    caches.putIfAbsent(cacheId, new Entry(spec, new AtomicReferenceArray<>(spec.rangeCount())));
  }

  /** Publishes {@code block} as the current view of its range; the caller must not mutate it. */
  public void publish(String cacheId, Block block) {
    entry(cacheId).blocks.set(block.range(), block);
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
   * width} floats in request order) and returns how many were missing; their positions are written
   * to {@code missing}, which needs room for every index. Indices must have been checked.
   */
  public int gather(String cacheId, long[] indices, float[][] out, int[] missing) {
    Entry e = entry(cacheId);
    CacheSpec spec = e.spec;
    int fields = spec.fields().size();
    int[] widths = new int[fields];
    for (int f = 0; f < fields; f++) {
      widths[f] = spec.fields().get(f).width();
    }
    int rangeSize = spec.rangeSize();
    int missingCount = 0;
    Block block = null;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      int range = (int) (index / rangeSize);
      if (block == null || block.range() != range) {
        block = e.blocks.get(range);
      }
      if (block == null || !block.isPresent(index)) {
        missing[missingCount++] = i;
        continue;
      }
      for (int f = 0; f < fields; f++) {
        block.copyValues(f, index, out[f], i * widths[f]);
      }
    }
    return missingCount;
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
