package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The counters lookups and prefetches record, read as snapshots. */
class TierStatsTest {
  @Test
  void hitsAndPrefetchLeadsAddUp() {
    TierStats stats = new TierStats();
    TierStats.Snapshot empty = stats.snapshot();
    assertEquals(0, empty.prefetchStepsMin());
    assertTrue(Double.isNaN(empty.meanPrefetchLead()));

    stats.hit(Tier.HOT, 10);
    stats.hit(Tier.HOT, 5);
    stats.hit(Tier.WARM, 3);
    stats.hit(Tier.COLD, 1);
    stats.recordPrefetchLead(4);
    stats.recordPrefetchLead(0);
    stats.recordPrefetchLead(2);
    TierStats.Snapshot s = stats.snapshot();
    assertEquals(15, s.hits(Tier.HOT));
    assertEquals(3, s.hits(Tier.WARM));
    assertEquals(1, s.coldHits());
    assertEquals(3, s.prefetches());
    assertEquals(6, s.prefetchStepsSum());
    assertEquals(0, s.prefetchStepsMin());
    assertEquals(2.0, s.meanPrefetchLead());
    assertEquals(0, empty.hotHits(), "a snapshot does not change");

    var e = assertThrows(IllegalArgumentException.class, () -> stats.recordPrefetchLead(-1));
    assertEquals("prefetch lead -1 steps, expected 0 or more", e.getMessage());
  }
}
