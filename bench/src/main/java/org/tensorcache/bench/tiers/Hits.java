package org.tensorcache.bench.tiers;

import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.store.tier.TierStats;

/**
 * The values a cache served between two snapshots of its statistics: {@code hot} from hot blocks
 * (or prefetched rows that were ready), {@code warm} from mapped segments, {@code cold} from the
 * range's shard (or a prefetched step still being fetched).
 */
public record Hits(long hot, long warm, long cold) {
  static Hits between(TierStats.Snapshot before, TierStats.Snapshot after) {
    return new Hits(
        after.hotHits() - before.hotHits(),
        after.warmHits() - before.warmHits(),
        after.coldHits() - before.coldHits());
  }

  /** The hot share of every value served, NaN when none was. */
  double hotShare() {
    return (double) hot / (hot + warm + cold);
  }

  Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("hot", hot);
    m.put("warm", warm);
    m.put("cold", cold);
    m.put("hot_share", Math.round(hotShare() * 10_000) / 10_000.0);
    return m;
  }
}
