package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** The arrays of evicted blocks: reused once each, for blocks of their shape, within a bound. */
class ArrayPoolTest {
  static final CacheSpec SPEC = TierFixtures.rows("pool", 5, 100);
  static final long BLOCK = 100 * 24 + 16;

  @Test
  void anEvictedBlocksArraysGoToTheNextBlockOfTheirShapeOnce() {
    HotTier tier = new HotTier(2 * BLOCK, EvictionPolicy.LRU, 2 * BLOCK);
    tier.register("c", SPEC, new PublishedBlocks(SPEC.rangeCount()));
    Block b0 = TierFixtures.rowsBlock(SPEC, 0, null);
    tier.admit("c", b0);
    assertNull(tier.takeArrays(SPEC, 1), "nothing evicted yet");
    tier.admit("c", TierFixtures.rowsBlock(SPEC, 1, null));
    tier.admit("c", TierFixtures.rowsBlock(SPEC, 2, null)); // evicts 0

    Object[] arrays = tier.takeArrays(SPEC, 3);
    assertNotNull(arrays);
    assertSame(b0.elementArray(0), arrays[0]);
    assertSame(b0.elementArray(1), arrays[1]);
    assertNull(tier.takeArrays(SPEC, 3), "handed out once");
    assertEquals(0, tier.pool().bytesHeld());

    Block b3 = TierFixtures.rowsBlock(SPEC, 3, arrays);
    assertEquals(TierFixtures.rowsBlock(SPEC, 3, null), b3, "every element was overwritten");
    assertTrue(tier.admit("c", b3));
  }

  @Test
  void aShorterRangeTakesNoArraysOfAFullOne() {
    CacheSpec spec = new CacheSpec("short", 250, SPEC.fields(), 100); // the last range holds 50
    ArrayPool pool = new ArrayPool(1 << 20);
    pool.offer(new float[400]);
    pool.offer(new long[100]);
    assertNull(pool.takeArrays(spec, 2));
    assertNotNull(pool.takeArrays(spec, 0));
  }

  @Test
  void fieldsOfOneShapeTakeDistinctArrays() {
    CacheSpec twin =
        new CacheSpec(
            "twin", 128, List.of(FieldSpec.scalar("chosen"), FieldSpec.scalar("rejected")), 64);
    ArrayPool pool = new ArrayPool(1 << 20);
    float[] one = new float[64];
    pool.offer(one);
    assertNull(pool.takeArrays(twin, 0), "two fields need two arrays");
    float[] two = new float[64];
    pool.offer(two);
    Object[] arrays = pool.takeArrays(twin, 1);
    assertNotSame(arrays[0], arrays[1]);
    assertTrue(List.of(arrays).containsAll(List.of(one, two)));
  }

  @Test
  void thePoolIsBoundedAndDropsTheOldestFirst() {
    CacheSpec spec = TierFixtures.scalars("bounded", 4); // float[64]: 256 bytes
    ArrayPool pool = new ArrayPool(2 * 256 + 100);
    float[][] offered = new float[4][64];
    for (float[] a : offered) {
      assertTrue(pool.offer(a));
      assertTrue(pool.bytesHeld() <= pool.maxBytes(), pool.bytesHeld() + " bytes");
    }
    assertFalse(pool.offer(new float[1000]), "larger than the pool");
    assertSame(offered[3], pool.takeArrays(spec, 0)[0]);
    assertSame(offered[2], pool.takeArrays(spec, 0)[0]);
    assertNull(pool.takeArrays(spec, 0), "the two oldest were dropped");

    ArrayPool none = new ArrayPool(0);
    assertFalse(none.offer(new float[64]));
    assertNull(none.takeArrays(spec, 0));
  }

  @Test
  void aMappedSegmentBuildsItsBlockInRecycledArrays(@TempDir Path dir) throws IOException {
    Fingerprint fp = Fixtures.fingerprint(SPEC);
    Path file = dir.resolve("r1.safetensors");
    Block written = TierFixtures.rowsBlock(SPEC, 1, null);
    SegmentFile.write(file, written, fp);
    ArrayPool pool = new ArrayPool(1 << 20);
    float[] hidden = new float[400];
    long[] token = new long[100];
    Arrays.fill(hidden, 99f); // stale values of another range
    pool.offer(hidden);
    pool.offer(token);
    try (MappedSegment m = MappedSegment.open(file, SPEC, fp, 1)) {
      Block b = m.toBlock(pool);
      assertSame(hidden, b.elementArray(0));
      assertSame(token, b.elementArray(1));
      assertEquals(written, b);
      assertNotSame(hidden, m.toBlock(pool).elementArray(0), "the pool is empty now");
    }
  }
}
