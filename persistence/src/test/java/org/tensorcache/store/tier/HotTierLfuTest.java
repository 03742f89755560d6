package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/** LFU eviction order: counts decide, recency breaks ties, and halving ages old counts. */
class HotTierLfuTest {
  static final CacheSpec SPEC = TierFixtures.scalars("lfu", 10);
  static final long BLOCK = 264;

  HotTier tier;

  HotTier tier(int agingPeriod) {
    tier = new HotTier(3 * BLOCK, EvictionPolicy.LFU, 0, agingPeriod);
    tier.register("c", SPEC, new PublishedBlocks(SPEC.rangeCount()));
    return tier;
  }

  List<Integer> admit(int range) {
    List<Integer> hot = new ArrayList<>();
    for (int r = 0; r < SPEC.rangeCount(); r++) {
      if (tier.isHot("c", r)) {
        hot.add(r);
      }
    }
    assertTrue(tier.admit("c", TierFixtures.scalarBlock(SPEC, range)));
    hot.removeIf(r -> tier.isHot("c", r));
    return hot;
  }

  void touch(int range, int times) {
    for (int i = 0; i < times; i++) {
      tier.touch("c", range);
    }
  }

  @Test
  void theRangeWithFewestUsesGoesFirst() {
    tier(Integer.MAX_VALUE);
    admit(0);
    admit(1);
    admit(2);
    touch(0, 5); // an admission counts as a use: 6
    touch(1, 2); // 3
    touch(2, 3); // 4
    assertEquals(List.of(1), admit(3));
    // a newcomer has one use: it goes next unless it is used
    assertEquals(List.of(3), admit(4));
    touch(4, 10); // 11
    assertEquals(List.of(2), admit(5));
    assertEquals(List.of(5), admit(6));
    assertEquals(3 * BLOCK, tier.bytesHeld());
  }

  @Test
  void equalCountsGoLeastRecentlyUsedFirst() {
    tier(Integer.MAX_VALUE);
    admit(0);
    admit(1);
    touch(1, 1); // 2 uses, an old tick
    admit(2);
    touch(0, 1); // 2 uses, a newer tick
    assertEquals(List.of(2), admit(3), "one use");
    touch(3, 1); // 2 uses, the newest tick
    assertEquals(List.of(1), admit(4), "2 uses each: 1 was used least recently");
  }

  @Test
  void countsAreKeptAcrossEvictions() {
    tier(Integer.MAX_VALUE);
    touch(7, 20); // read warm, while not hot
    admit(7);
    admit(1);
    admit(2);
    assertEquals(List.of(1), admit(3), "7 arrives with its 21 uses and is not the victim");
  }

  /**
   * A range used heavily once and never again: without aging it outlives any churn of ranges used
   * less; with counts halved every two admissions it is evicted within a few dozen.
   */
  @Test
  void agingLetsAOnceHotRangeGo() {
    assertEquals(-1, admissionsUntilEvicted(Integer.MAX_VALUE, 60));
    int withAging = admissionsUntilEvicted(2, 60);
    assertTrue(withAging > 0 && withAging < 60, "evicted after " + withAging + " admissions");
  }

  /** Churns ranges 1..9 past range 0; returns the admission that evicted 0, or -1. */
  private int admissionsUntilEvicted(int agingPeriod, int admissions) {
    tier(agingPeriod);
    admit(0);
    touch(0, 100);
    for (int a = 1; a <= admissions; a++) {
      int r = 1 + (a - 1) % 9;
      if (admit(r).contains(0)) {
        return a;
      }
      touch(r, 4);
    }
    return -1;
  }
}
