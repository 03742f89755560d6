package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Readers copy rows out of hot blocks while a writer admits blocks built in the arrays of the ones
 * it evicts: every row a reader keeps must be the values of its own index, never a row half
 * overwritten for another range.
 */
class OptimisticReadTest {
  static final CacheSpec SPEC = TierFixtures.rows("race", 16, 1024);
  static final long BLOCK = 1024 * 24 + 16 * 8;

  @Test
  void aCopyKeptByTheReaderIsNeverOfARecycledArray() throws Exception {
    HotTier tier = new HotTier(4 * BLOCK, EvictionPolicy.LRU, 2 * BLOCK);
    PublishedBlocks slots = new PublishedBlocks(SPEC.rangeCount());
    tier.register("c", SPEC, slots);
    long deadline = System.nanoTime() + 1_500_000_000L;
    AtomicReference<String> wrong = new AtomicReference<>();
    AtomicLong kept = new AtomicLong();
    AtomicLong reused = new AtomicLong();

    Thread writer =
        new Thread(
            () -> {
              SplittableRandom random = new SplittableRandom(1);
              while (System.nanoTime() < deadline && wrong.get() == null) {
                int r = random.nextInt(SPEC.rangeCount());
                if (tier.isHot("c", r)) {
                  continue;
                }
                Object[] arrays = tier.takeArrays(SPEC, r);
                reused.addAndGet(arrays == null ? 0 : 1);
                tier.admit("c", TierFixtures.rowsBlock(SPEC, r, arrays));
              }
            });
    Thread[] readers = new Thread[2];
    for (int t = 0; t < readers.length; t++) {
      long seed = 100 + t;
      readers[t] =
          new Thread(
              () -> {
                SplittableRandom random = new SplittableRandom(seed);
                Object[] out = {new float[4], new long[1]};
                long n = 0;
                while (System.nanoTime() < deadline && wrong.get() == null) {
                  long index = random.nextLong(SPEC.n());
                  if (OptimisticRead.gather(slots, SPEC.rangeOf(index), index, out, 0)) {
                    check(index, out, wrong);
                    n++;
                  }
                }
                kept.addAndGet(n);
              });
    }
    writer.start();
    for (Thread r : readers) {
      r.start();
    }
    writer.join();
    for (Thread r : readers) {
      r.join();
    }
    assertEquals(null, wrong.get());
    assertTrue(kept.get() > 1000, kept + " rows kept");
    assertTrue(reused.get() > 10, reused + " blocks built in recycled arrays");
    assertTrue(tier.peakBytesHeld() <= 4 * BLOCK);
  }

  @Test
  void aMissingExampleOrRangeIsFalse() {
    CacheSpec spec = TierFixtures.scalars("gaps", 2);
    PublishedBlocks slots = new PublishedBlocks(2);
    float[] v = new float[64];
    Arrays.fill(v, Block.SENTINEL);
    v[5] = 1.5f;
    slots.setRelease(0, Block.adopt(spec, 0, new Object[] {v}, new long[] {1L << 5}));
    Object[] out = {new float[1]};
    assertTrue(OptimisticRead.gather(slots, 0, 5, out, 0));
    assertEquals(1.5f, ((float[]) out[0])[0]);
    assertFalse(OptimisticRead.gather(slots, 0, 6, out, 0));
    assertFalse(OptimisticRead.gather(slots, 1, 70, out, 0));
  }

  private static void check(long index, Object[] out, AtomicReference<String> wrong) {
    float[] hidden = (float[]) out[0];
    long token = ((long[]) out[1])[0];
    for (int k = 0; k < 4; k++) {
      if (hidden[k] != TierFixtures.hiddenValue(index, k)) {
        wrong.compareAndSet(null, "index " + index + " hidden[" + k + "] = " + hidden[k]);
      }
    }
    if (token != TierFixtures.tokenValue(index)) {
      wrong.compareAndSet(null, "index " + index + " token = " + token);
    }
  }
}
