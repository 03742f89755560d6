package org.tensorcache.bench.tiers;

import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.store.tier.TierStats;

/**
 * The values a cache served from each tier between two snapshots of its statistics.
 *
 * @param hot values copied from hot blocks (or from a step's prefetched rows that were ready)
 * @param warm values read from mapped segment files
 * @param cold values asked from the range's shard (or a prefetched step still being fetched)
 */
public record Hits(long hot, long warm, long cold) {
  /** What was served after {@code before} up to {@code after}. */
  public static Hits between(TierStats.Snapshot before, TierStats.Snapshot after) {
    return new Hits(
        after.hotHits() - before.hotHits(),
        after.warmHits() - before.warmHits(),
        after.coldHits() - before.coldHits());
  }

  /** The hot share of every value served, NaN when none was. */
  public double hotShare() {
    long all = hot + warm + cold;
    return all == 0 ? Double.NaN : (double) hot / all;
  }

  /** The counts and the hot share for a results file. */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("hot", hot);
    m.put("warm", warm);
    m.put("cold", cold);
    m.put("hot_share", Math.round(hotShare() * 10_000) / 10_000.0);
    return m;
  }
}
