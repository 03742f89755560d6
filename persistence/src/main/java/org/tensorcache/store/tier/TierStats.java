package org.tensorcache.store.tier;

import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * The tier statistics of one cache on one node: hits per tier, which lookups record, admissions,
 * evictions and the bytes held hot, which {@link HotTier} records, and how far ahead prefetches
 * ran. Counters are {@link LongAdder}s, so that many lookup threads can record without contending;
 * {@link #snapshot()} reads them into an immutable {@link Snapshot}, each value exact but the
 * values not taken at one instant.
 */
public final class TierStats {
  private final LongAdder[] hits = new LongAdder[Tier.values().length];
  private final LongAdder admissions = new LongAdder();
  private final LongAdder evictions = new LongAdder();
  private final LongAdder rejections = new LongAdder();
  private final LongAdder prefetches = new LongAdder();
  private final LongAdder prefetchSteps = new LongAdder();
  private final LongAccumulator prefetchMin = new LongAccumulator(Math::min, Long.MAX_VALUE);

  // written only under the tier's lock, read by snapshots without it
  private volatile long bytesHeld;
  private volatile long peakBytesHeld;

  /** Statistics with every counter at zero. */
  public TierStats() {
    for (int t = 0; t < hits.length; t++) {
      hits[t] = new LongAdder();
    }
  }

  /** Records {@code n} values found in {@code tier}; a lookup calls it once per batch and tier. */
  public void hit(Tier tier, long n) {
    hits[tier.ordinal()].add(n);
  }

  /**
   * Records a prefetch that made a range hot {@code stepsAhead} training steps before the step that
   * needed it (0 when it came just in time).
   */
  public void recordPrefetchLead(long stepsAhead) {
    if (stepsAhead < 0) {
      throw new IllegalArgumentException(
          "prefetch lead " + stepsAhead + " steps, expected 0 or more");
    }
    prefetches.increment();
    prefetchSteps.add(stepsAhead);
    prefetchMin.accumulate(stepsAhead);
  }

  /** The counters now. */
  public Snapshot snapshot() {
    long count = prefetches.sum();
    return new Snapshot(
        hits[Tier.HOT.ordinal()].sum(),
        hits[Tier.WARM.ordinal()].sum(),
        hits[Tier.COLD.ordinal()].sum(),
        admissions.sum(),
        evictions.sum(),
        rejections.sum(),
        bytesHeld,
        peakBytesHeld,
        count,
        prefetchSteps.sum(),
        count == 0 ? 0 : prefetchMin.get());
  }

  void admitted() {
    admissions.increment();
  }

  void evicted() {
    evictions.increment();
  }

  void rejected() {
    rejections.increment();
  }

  /** Sets the bytes this cache holds hot; called under the tier's lock, the only writer. */
  void held(long bytes) {
    bytesHeld = bytes;
    if (bytes > peakBytesHeld) {
      peakBytesHeld = bytes;
    }
  }

  /**
   * The statistics of one cache at one moment.
   *
   * @param hotHits values found in the hot tier
   * @param warmHits values found in the warm tier
   * @param coldHits values fetched from another node
   * @param admissions blocks admitted hot (a replacement of a range's block counts)
   * @param evictions ranges evicted from the hot tier, by the policy or explicitly
   * @param rejections admissions refused for want of evictable room
   * @param bytesHeld the bytes of this cache's hot blocks
   * @param peakBytesHeld the most bytes this cache ever held hot
   * @param prefetches prefetches recorded
   * @param prefetchStepsSum the sum of their leads in steps
   * @param prefetchStepsMin the smallest lead, 0 when none was recorded
   */
  public record Snapshot(
      long hotHits,
      long warmHits,
      long coldHits,
      long admissions,
      long evictions,
      long rejections,
      long bytesHeld,
      long peakBytesHeld,
      long prefetches,
      long prefetchStepsSum,
      long prefetchStepsMin) {
    /** The hits recorded for {@code tier}. */
    public long hits(Tier tier) {
      return switch (tier) {
        case HOT -> hotHits;
        case WARM -> warmHits;
        case COLD -> coldHits;
      };
    }

    /** The mean prefetch lead in steps, NaN when no prefetch was recorded. */
    public double meanPrefetchLead() {
      return prefetches == 0 ? Double.NaN : (double) prefetchStepsSum / prefetches;
    }
  }
}
