package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/** LRU eviction order, the budget's arithmetic and the tier's argument checks. */
class HotTierLruTest {
  static final CacheSpec SPEC = TierFixtures.scalars("lru", 10);
  static final long BLOCK = 264;

  final HotTier tier = new HotTier(3 * BLOCK, EvictionPolicy.LRU);
  final PublishedBlocks slots = new PublishedBlocks(SPEC.rangeCount());

  HotTierLruTest() {
    tier.register("c", SPEC, slots);
  }

  /** Admits {@code range} and returns the ranges that stopped being hot. */
  List<Integer> admit(int range) {
    boolean[] before = new boolean[SPEC.rangeCount()];
    for (int r = 0; r < before.length; r++) {
      before[r] = tier.isHot("c", r);
    }
    Block b = TierFixtures.scalarBlock(SPEC, range);
    assertTrue(tier.admit("c", b));
    assertSame(b, slots.get(range));
    List<Integer> evicted = new ArrayList<>();
    for (int r = 0; r < before.length; r++) {
      if (before[r] && !tier.isHot("c", r)) {
        assertNull(slots.get(r), "the slot of evicted range " + r + " is cleared");
        evicted.add(r);
      }
    }
    return evicted;
  }

  @Test
  void bytesOfABlockAreItsElementsAndPresenceWords() {
    assertEquals(BLOCK, HotTier.bytesOf(TierFixtures.scalarBlock(SPEC, 0)));
    CacheSpec rows = TierFixtures.rows("r", 2, 100);
    // 100 * (4 floats * 4 + 1 long * 8) + 2 words * 8
    assertEquals(100 * 24 + 16, HotTier.bytesOf(TierFixtures.rowsBlock(rows, 1, null)));
  }

  @Test
  void theLeastRecentlyUsedRangeGoesFirst() {
    assertEquals(List.of(), admit(0));
    assertEquals(List.of(), admit(1));
    assertEquals(List.of(), admit(2));
    assertEquals(3 * BLOCK, tier.bytesHeld());
    tier.touch("c", 0);
    assertEquals(List.of(1), admit(3));
    assertEquals(List.of(2), admit(4));
    // 0 was touched before 3 was admitted, in the same tick: admission order decides, as LRU would
    assertEquals(List.of(0), admit(5));
    tier.touch("c", 3);
    assertEquals(List.of(4), admit(6), "3 was touched after 4 was admitted");
    assertEquals(List.of(5), admit(7), "then 5 (admitted), 3 (touched), 6 (admitted)");
    assertEquals(3 * BLOCK, tier.bytesHeld());
    TierStats.Snapshot s = tier.stats("c").snapshot();
    assertEquals(8, s.admissions());
    assertEquals(5, s.evictions());
    assertEquals(3 * BLOCK, s.peakBytesHeld());
    assertEquals(3 * BLOCK, tier.peakBytesHeld());
  }

  @Test
  void touchesBetweenTwoAdmissionsTieAndAdmissionOrderBreaksTheTie() {
    admit(0);
    admit(1);
    admit(2);
    tier.touch("c", 2);
    tier.touch("c", 1);
    tier.touch("c", 0);
    // all three touched in one tick: the first admitted goes first, whatever the touch order
    assertEquals(List.of(0), admit(3));
  }

  @Test
  void aNodeWhoseCachesAllFitNeverEvicts() {
    HotTier roomy = new HotTier(1 << 20, EvictionPolicy.LRU);
    CacheSpec other = TierFixtures.rows("other", 4, 100);
    roomy.register("a", SPEC, new PublishedBlocks(SPEC.rangeCount()));
    roomy.register("b", other, new PublishedBlocks(other.rangeCount()));
    for (int round = 0; round < 3; round++) {
      for (int r = 0; r < SPEC.rangeCount(); r++) {
        assertTrue(roomy.admit("a", TierFixtures.scalarBlock(SPEC, r)));
        roomy.touch("a", r);
      }
      for (int r = 0; r < other.rangeCount(); r++) {
        assertTrue(roomy.admit("b", TierFixtures.rowsBlock(other, r, null)));
      }
    }
    assertEquals(
        0, roomy.stats("a").snapshot().evictions() + roomy.stats("b").snapshot().evictions());
    assertEquals(10 * BLOCK + 4 * (100 * 24 + 16), roomy.bytesHeld());
  }

  @Test
  void argumentsAreCheckedAndNamed() {
    var e = assertThrows(IllegalArgumentException.class, () -> new HotTier(0, EvictionPolicy.LRU));
    assertTrue(e.getMessage().contains("budget 0"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> tier.touch("nope", 0));
    assertTrue(e.getMessage().contains("'nope'") && e.getMessage().contains("[c]"), e.getMessage());
    var r = assertThrows(IndexOutOfBoundsException.class, () -> tier.touch("c", 10));
    assertTrue(r.getMessage().contains("range 10 out of range [0, 10)"), r.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> tier.register("c", SPEC, new PublishedBlocks(SPEC.rangeCount())));
    assertTrue(e.getMessage().contains("already registered"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class, () -> tier.register("d", SPEC, new PublishedBlocks(3)));
    assertTrue(e.getMessage().contains("3 slots"), e.getMessage());
    CacheSpec other = TierFixtures.scalars("other", 10);
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> tier.admit("c", TierFixtures.scalarBlock(other, 0)));
    assertTrue(e.getMessage().contains("block of cache 'other'"), e.getMessage());
  }

  @Test
  void policiesParseInAnyCase() {
    assertEquals(EvictionPolicy.LRU, EvictionPolicy.parse("lru"));
    assertEquals(EvictionPolicy.LFU, EvictionPolicy.parse(" Lfu "));
    var e = assertThrows(IllegalArgumentException.class, () -> EvictionPolicy.parse("fifo"));
    assertEquals("eviction policy 'fifo' unknown, expected one of [LRU, LFU]", e.getMessage());
  }

  @Test
  void anUnregisteredCacheReleasesItsBytes() {
    admit(0);
    admit(1);
    tier.unregister("c");
    assertEquals(0, tier.bytesHeld());
    assertNull(slots.get(0));
    assertNull(slots.get(1));
    assertThrows(IllegalArgumentException.class, () -> tier.isHot("c", 0));
  }
}
