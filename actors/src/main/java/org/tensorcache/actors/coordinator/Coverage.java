package org.tensorcache.actors.coordinator;

import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * What the fill driver has seen of each range in the replicas: the block itself when its values are
 * gossiped, or only how many of its examples are present when it is replicated by reference; since
 * when each range is complete, which segments were rejected at restore, and whether the restore of
 * each cache is over.
 */
final class Coverage {
  private final LongSupplier nanoClock;
  private final Map<String, Block[]> blocks = new HashMap<>();
  private final Map<String, int[]> present = new HashMap<>();
  private final Map<String, int[]> lengths = new HashMap<>();
  // segments read back after a start and not yet checked: not counted as persisted until they are
  private final Map<String, BitSet> verifying = new HashMap<>();
  // the clock's reading when the driver first saw each range complete; 0 while it is not
  private final Map<String, long[]> completeSince = new HashMap<>();
  private final Map<String, BitSet> rejected = new HashMap<>();
  private final Set<String> restored = new HashSet<>();

  Coverage() {
    this(System::nanoTime);
  }

  /** Coverage whose waits are measured with {@code nanoClock} (a {@link System#nanoTime}). */
  Coverage(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

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
    completeSince.put(cacheId, new long[ranges]);
    rejected.put(cacheId, new BitSet(ranges));
  }

  /** Every segment of the cache known at start is checked and back in the replicas, or lost. */
  void restored(String cacheId) {
    restored.add(cacheId);
  }

  /** A range's segment failed its checks at restore: it is computed again. */
  void rejected(String cacheId, int range) {
    rejected.get(cacheId).set(range);
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
    presence(cacheId, block.range(), block.presentCount());
  }

  /** Records the presence count of a range replicated by reference. */
  void presence(String cacheId, int range, int count) {
    present.get(cacheId)[range] = count;
    long[] since = completeSince.get(cacheId);
    if (!complete(cacheId, range)) {
      since[range] = 0;
    } else if (since[range] == 0) {
      since[range] = nanoClock.getAsLong();
    }
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

  /**
   * The state of every range ({@link CacheStatus#PERSISTED} and so on): persisted and checked, else
   * complete in the replicas, else rejected at restore, else computing (some of its examples
   * present), else missing.
   */
  byte[] rangeStates(String cacheId, CoordinatorState.CacheProgress progress) {
    byte[] states = new byte[ranges(cacheId)];
    BitSet unchecked = verifying.get(cacheId);
    for (int r = 0; r < states.length; r++) {
      states[r] =
          progress.isPersisted(r) && !unchecked.get(r)
              ? CacheStatus.PERSISTED
              : complete(cacheId, r)
                  ? CacheStatus.COMPLETE
                  : rejected.get(cacheId).get(r)
                      ? CacheStatus.REJECTED
                      : present.get(cacheId)[r] > 0 ? CacheStatus.COMPUTING : CacheStatus.MISSING;
    }
    return states;
  }

  /**
   * How long the oldest range that is complete in the replicas has waited for its segment to be
   * recorded persisted, in milliseconds; 0 when none waits.
   */
  long unpersistedMillis(String cacheId, CoordinatorState.CacheProgress progress) {
    long now = nanoClock.getAsLong();
    long oldest = 0;
    long[] since = completeSince.get(cacheId);
    for (int r = 0; r < since.length; r++) {
      if (since[r] != 0 && !progress.isPersisted(r)) {
        oldest = Math.max(oldest, now - since[r]);
      }
    }
    return oldest / 1_000_000;
  }

  /** Coverage and persistence of every cache, for {@link Coordinator.GetStatus}. */
  Coordinator.Status status(CoordinatorState state, java.util.List<CacheDefinition> caches) {
    java.util.List<CacheStatus> out = new java.util.ArrayList<>();
    for (CacheDefinition d : caches) {
      CoordinatorState.CacheProgress p = state.progress(d.cacheId());
      String id = d.cacheId();
      boolean known = knows(id);
      out.add(
          new CacheStatus(
              id,
              d.spec().n(),
              known ? present(id) : 0,
              d.spec().rangeCount(),
              known ? completeRanges(id) : 0,
              known ? persistedRanges(id, p) : p.persistedCount(),
              p.filling(),
              restored.contains(id),
              known ? unpersistedMillis(id, p) : 0,
              known ? rangeStates(id, p) : new byte[d.spec().rangeCount()]));
    }
    return new Coordinator.Status(out.toArray(CacheStatus[]::new));
  }
}
