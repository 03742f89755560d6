package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/** Pins, refused admissions, replacements and the budget under a random workload. */
class HotTierBudgetTest {
  static final CacheSpec SPEC = TierFixtures.scalars("pins", 10);
  static final long BLOCK = 264;

  final HotTier tier = new HotTier(3 * BLOCK, EvictionPolicy.LRU);
  final PublishedBlocks slots = new PublishedBlocks(SPEC.rangeCount());

  HotTierBudgetTest() {
    tier.register("c", SPEC, slots);
  }

  boolean admit(int range) {
    return tier.admit("c", TierFixtures.scalarBlock(SPEC, range));
  }

  @Test
  void pinnedRangesAreNeverEvictedAndAnAdmissionThatCannotFitChangesNothing() {
    admit(0);
    admit(1);
    admit(2);
    Block[] before = {slots.get(0), slots.get(1), slots.get(2)};
    tier.pin("c", 0);
    tier.pin("c", 1);
    tier.pin("c", 1);
    tier.pin("c", 2);
    assertFalse(admit(3));
    assertEquals(3 * BLOCK, tier.bytesHeld());
    for (int r = 0; r < 3; r++) {
      assertSame(before[r], slots.get(r));
    }
    assertNull(slots.get(3));
    assertFalse(tier.isHot("c", 3));
    assertEquals(1, tier.stats("c").snapshot().rejections());
    assertFalse(tier.evict("c", 2), "pinned");

    tier.unpin("c", 1);
    assertFalse(admit(3), "1 is pinned twice");
    tier.unpin("c", 1);
    assertTrue(admit(3));
    assertFalse(tier.isHot("c", 1), "the only unpinned range");
    var e = assertThrows(IllegalStateException.class, () -> tier.unpin("c", 1));
    assertTrue(e.getMessage().contains("range 1 of cache 'c' is not pinned"), e.getMessage());
  }

  @Test
  void aPinTakenBeforeAdmissionProtectsTheRangeOnceHot() {
    tier.pin("c", 5);
    admit(5);
    tier.touch("c", 5);
    for (int r = 0; r < 5; r++) {
      assertTrue(admit(r));
      assertTrue(tier.isHot("c", 5));
    }
    tier.unpin("c", 5);
    assertTrue(tier.evict("c", 5));
    assertFalse(tier.evict("c", 5), "no longer hot");
  }

  @Test
  void aBlockLargerThanTheBudgetIsRefused() {
    HotTier small = new HotTier(BLOCK - 1, EvictionPolicy.LFU);
    PublishedBlocks s = new PublishedBlocks(SPEC.rangeCount());
    small.register("c", SPEC, s);
    assertFalse(small.admit("c", TierFixtures.scalarBlock(SPEC, 0)));
    assertNull(s.get(0));
    assertEquals(0, small.bytesHeld());
  }

  @Test
  void aFullerBlockReplacesItsRangeInPlace() {
    admit(0);
    admit(1);
    admit(2);
    Block fuller = TierFixtures.scalarBlock(SPEC, 1);
    assertTrue(tier.admit("c", fuller));
    assertSame(fuller, slots.get(1));
    assertEquals(3 * BLOCK, tier.bytesHeld());
    assertEquals(0, tier.stats("c").snapshot().evictions());
    assertNull(tier.takeArrays(SPEC, 0), "a replaced block is not recycled");
  }

  /**
   * Random admissions, touches, pins and evictions over caches of different block sizes: the bytes
   * held always equal the blocks published, and the peak never passes the budget.
   */
  @ParameterizedTest
  @EnumSource(EvictionPolicy.class)
  void theBudgetHoldsUnderARandomWorkload(EvictionPolicy policy) {
    CacheSpec a = TierFixtures.scalars("a", 12);
    CacheSpec b = Fixtures.spec(); // 6040 bytes a block, 2016 the last
    CacheSpec[] specs = {a, b};
    long budget = 20_000;
    HotTier t = new HotTier(budget, policy, budget / 4);
    PublishedBlocks[] published = new PublishedBlocks[specs.length];
    int[][] pins = new int[specs.length][];
    for (int c = 0; c < specs.length; c++) {
      published[c] = new PublishedBlocks(specs[c].rangeCount());
      pins[c] = new int[specs[c].rangeCount()];
      t.register("c" + c, specs[c], published[c]);
    }
    SplittableRandom random = new SplittableRandom(42);
    int refused = 0;
    boolean[][] hot = {new boolean[a.rangeCount()], new boolean[b.rangeCount()]};
    for (int step = 0; step < 20_000; step++) {
      int c = random.nextInt(specs.length);
      String id = "c" + c;
      int r = random.nextInt(specs[c].rangeCount());
      int op = random.nextInt(10);
      if (op < 4) {
        Block block =
            c == 0
                ? TierFixtures.scalarBlock(a, r)
                : Fixtures.block(b, r, random.nextLong(), random.nextInt(101));
        Block before = published[c].get(r);
        boolean admitted = t.admit(id, block);
        refused += admitted ? 0 : 1;
        assertSame(admitted ? block : before, published[c].get(r));
      } else if (op < 7) {
        t.touch(id, r);
      } else if (op < 8 && pins[c][r] < 2 && pinnedCount(pins) < 3) {
        t.pin(id, r);
        pins[c][r]++;
      } else if (op < 9 && pins[c][r] > 0) {
        t.unpin(id, r);
        pins[c][r]--;
      } else {
        boolean wasHot = t.isHot(id, r);
        assertEquals(wasHot && pins[c][r] == 0, t.evict(id, r));
      }
      long publishedBytes = 0;
      for (int k = 0; k < specs.length; k++) {
        for (int q = 0; q < specs[k].rangeCount(); q++) {
          Block held = published[k].get(q);
          assertEquals(held != null, t.isHot("c" + k, q));
          if (hot[k][q] && pins[k][q] > 0) {
            assertTrue(held != null, "pinned range " + q + " of c" + k + " evicted");
          }
          hot[k][q] = held != null;
          publishedBytes += held == null ? 0 : HotTier.bytesOf(held);
        }
      }
      assertEquals(publishedBytes, t.bytesHeld(), "step " + step);
      assertTrue(t.bytesHeld() <= budget, "step " + step);
    }
    long perCache = t.stats("c0").snapshot().bytesHeld() + t.stats("c1").snapshot().bytesHeld();
    assertEquals(t.bytesHeld(), perCache);
    assertTrue(t.peakBytesHeld() <= budget, "peak " + t.peakBytesHeld());
    assertTrue(t.peakBytesHeld() > budget - 6040, "the budget was used: " + t.peakBytesHeld());
    assertTrue(t.stats("c1").snapshot().peakBytesHeld() <= budget);
    assertTrue(t.stats("c0").snapshot().evictions() + t.stats("c1").snapshot().evictions() > 100);
    assertTrue(refused < 8000, refused + " refused");
  }

  private static int pinnedCount(int[][] pins) {
    int n = 0;
    for (int[] p : pins) {
      for (int x : p) {
        n += x > 0 ? 1 : 0;
      }
    }
    return n;
  }
}
