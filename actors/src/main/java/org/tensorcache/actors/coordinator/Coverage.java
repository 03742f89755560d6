package org.tensorcache.actors.coordinator;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * What the coordinator has seen of each range in the replicas: the block itself when its values are
 * gossiped, or only how many of its examples are present when it is replicated by reference.
 */
final class Coverage {
  private final Map<String, Block[]> blocks = new HashMap<>();
  private final Map<String, int[]> present = new HashMap<>();
  private final Map<String, int[]> lengths = new HashMap<>();
  // segments read back after a start and not yet checked: not counted as persisted until they are
  private final Map<String, BitSet> verifying = new HashMap<>();

  void add(CacheDefinition d) {
    add(d.cacheId(), d.spec());
  }

  void add(String cacheId, CacheSpec spec) {
    int ranges = spec.rangeCount();
    blocks.put(cacheId, new Block[ranges]);
    present.put(cacheId, new int[ranges]);
    int[] length = new int[ranges];
    for (int r = 0; r < ranges; r++) {
      length[r] = spec.rangeLength(r);
    }
    lengths.put(cacheId, length);
    verifying.put(cacheId, new BitSet(ranges));
  }

  /** Marks a range whose segment is being read back and checked. */
  void verifying(String cacheId, int range) {
    verifying.get(cacheId).set(range);
  }

  /** The check of a range's segment is over, whatever its outcome. */
  void verified(String cacheId, int range) {
    verifying.get(cacheId).clear(range);
  }

  /**
   * Ranges persisted and checked: the journal's persisted ranges less those whose segments are
   * still being checked, so that no one is told a cache is complete while a segment of it may be
   * damaged and about to be computed again.
   */
  int persistedRanges(String cacheId, CoordinatorState.CacheProgress progress) {
    int count = progress.persistedCount();
    BitSet unchecked = verifying.get(cacheId);
    for (int r = unchecked.nextSetBit(0); r >= 0; r = unchecked.nextSetBit(r + 1)) {
      count -= progress.isPersisted(r) ? 1 : 0;
    }
    return count;
  }

  boolean knows(String cacheId) {
    return blocks.containsKey(cacheId);
  }

  /** Records a gossiped block. */
  void block(String cacheId, Block block) {
    blocks.get(cacheId)[block.range()] = block;
    present.get(cacheId)[block.range()] = block.presentCount();
  }

  /** Records the presence count of a range replicated by reference. */
  void presence(String cacheId, int range, int count) {
    present.get(cacheId)[range] = count;
  }

  /** The gossiped block of a range, or null. */
  Block block(String cacheId, int range) {
    return blocks.get(cacheId)[range];
  }

  boolean complete(String cacheId, int range) {
    return present.get(cacheId)[range] == lengths.get(cacheId)[range];
  }

  int ranges(String cacheId) {
    return lengths.get(cacheId).length;
  }

  long present(String cacheId) {
    long sum = 0;
    for (int p : present.get(cacheId)) {
      sum += p;
    }
    return sum;
  }

  int completeRanges(String cacheId) {
    int c = 0;
    for (int r = 0; r < ranges(cacheId); r++) {
      c += complete(cacheId, r) ? 1 : 0;
    }
    return c;
  }

  /** Coverage and persistence of every cache, for {@link Coordinator.GetStatus}. */
  Coordinator.Status status(CoordinatorState state, java.util.List<CacheDefinition> caches) {
    java.util.List<Coordinator.CacheStatus> out = new java.util.ArrayList<>();
    for (CacheDefinition d : caches) {
      CoordinatorState.CacheProgress p = state.progress(d.cacheId());
      boolean known = knows(d.cacheId());
      out.add(
          new Coordinator.CacheStatus(
              d.cacheId(),
              d.spec().n(),
              known ? present(d.cacheId()) : 0,
              d.spec().rangeCount(),
              known ? completeRanges(d.cacheId()) : 0,
              known ? persistedRanges(d.cacheId(), p) : p.persistedCount(),
              p.filling()));
    }
    return new Coordinator.Status(out.toArray(Coordinator.CacheStatus[]::new));
  }
}
