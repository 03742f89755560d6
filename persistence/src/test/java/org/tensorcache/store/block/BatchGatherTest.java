package org.tensorcache.store.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/** A batch gather across the published blocks of a cache, each of its loops. */
class BatchGatherTest {
  private static final float UNTOUCHED = 42f;

  /** Two scalars in ranges of 8 (the fast loop): range 1 partial, range 2 (short) never arrived. */
  @Test
  void copiesPresentExamplesReportsMissingOnesAndLeavesTheirSlotsAlone() {
    CacheSpec spec =
        new CacheSpec("g", 20, List.of(FieldSpec.scalar("a"), FieldSpec.scalar("b")), 8);
    PublishedBlocks blocks = new PublishedBlocks(spec.rangeCount());
    Block full = Block.empty(spec, 0);
    for (long i = 0; i < 8; i++) {
      full.put(i, new float[][] {{i}, {-i}});
    }
    Block partial = Block.empty(spec, 1);
    // a present value may be the sentinel itself: presence, not the value, decides
    partial.put(9, new float[][] {{Block.SENTINEL}, {Block.SENTINEL}});
    partial.put(12, new float[][] {{Block.SENTINEL}, {5}});
    partial.put(15, new float[][] {{-0.0f}, {Float.POSITIVE_INFINITY}});
    blocks.setRelease(0, full.copy());
    blocks.setRelease(1, partial.copy());

    long[] indices = {15, 3, 10, 9, 19, 12, 0, 16, 9};
    float[][] out = filled(2, indices.length);
    int[] missing = BlockGather.gather(spec, blocks, "g@1", indices, out);

    assertArrayEquals(new int[] {2, 4, 7}, missing);
    float inf = Block.SENTINEL;
    assertArrayEquals(new float[] {-0.0f, 3, 42, inf, 42, inf, 0, 42, inf}, out[0]);
    assertArrayEquals(
        new float[] {Float.POSITIVE_INFINITY, -3, 42, inf, 42, 5, 0, 42, inf}, out[1]);
  }

  @Test
  void aBatchWithNothingMissingReturnsTheSharedEmptyArray() {
    CacheSpec spec = new CacheSpec("g", 4, List.of(FieldSpec.scalar("a")), 4);
    PublishedBlocks blocks = new PublishedBlocks(1);
    Block b = Block.empty(spec, 0);
    for (long i = 0; i < 4; i++) {
      b.put(i, new float[][] {{i * 10}});
    }
    blocks.setRelease(0, b);
    float[][] out = {new float[3]};
    int[] first = BlockGather.gather(spec, blocks, "g", new long[] {3, 1, 3}, out);
    assertEquals(0, first.length);
    assertSame(first, BlockGather.gather(spec, blocks, "g", new long[] {0}, out));
    assertArrayEquals(new float[] {0, 10, 30}, out[0]);
  }

  @Test
  void anIndexOutsideTheCacheIsAnErrorThatNamesIt() {
    CacheSpec scalars = new CacheSpec("g", 20, List.of(FieldSpec.scalar("a")), 8);
    CacheSpec rows = new CacheSpec("h", 20, List.of(FieldSpec.vector("v", 2)), 6);
    for (CacheSpec spec : List.of(scalars, rows)) {
      PublishedBlocks blocks = new PublishedBlocks(spec.rangeCount());
      float[][] out = {new float[4]};
      for (long bad : new long[] {-1, 20, Long.MIN_VALUE, Long.MAX_VALUE}) {
        var e =
            assertThrows(
                IllegalArgumentException.class,
                () -> BlockGather.gather(spec, blocks, "id-7", new long[] {0, bad}, out));
        assertEquals("index " + bad + " out of range [0, 20) for cache 'id-7'", e.getMessage());
      }
    }
  }

  @Test
  void aPublishedBlockIsTheCurrentOneOfItsRange() {
    CacheSpec spec = new CacheSpec("g", 20, List.of(FieldSpec.scalar("a")), 8);
    PublishedBlocks blocks = new PublishedBlocks(spec.rangeCount());
    assertEquals(3, blocks.length());
    assertNull(blocks.get(2));
    Block b = Block.empty(spec, 2);
    blocks.setRelease(2, b);
    assertSame(b, blocks.get(2));
    assertSame(b, blocks.getAcquire(2));
  }

  /**
   * Whatever the fields, range size, presence and indices, the gather copies what {@link
   * Block#copyValues} gives for present examples and reports the others: the loop for one or two
   * scalars over power-of-two ranges and the loop for any shape agree with the block.
   */
  @Property(tries = 300)
  void agreesWithTheBlocksExampleByExample(
      @ForAll @IntRange(min = 1, max = 3) int fieldCount,
      @ForAll boolean vectors,
      @ForAll @IntRange(min = 1, max = 70) int rangeSize,
      @ForAll @IntRange(min = 1, max = 300) int n,
      @ForAll @IntRange(min = 0, max = 100) int presentPercent,
      @ForAll long seed) {
    List<FieldSpec> fields = new ArrayList<>();
    for (int f = 0; f < fieldCount; f++) {
      fields.add(vectors && f == 0 ? FieldSpec.vector("f" + f, 3) : FieldSpec.scalar("f" + f));
    }
    CacheSpec spec = new CacheSpec("p", n, fields, rangeSize);
    SplittableRandom random = new SplittableRandom(seed);
    PublishedBlocks blocks = new PublishedBlocks(spec.rangeCount());
    for (int r = 0; r < spec.rangeCount(); r++) {
      if (random.nextInt(8) > 0) { // now and then a range that has not arrived
        blocks.setRelease(r, randomBlock(spec, r, presentPercent, random));
      }
    }
    long[] indices = new long[1 + random.nextInt(2 * n)];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = random.nextInt(n);
    }
    float[][] out = new float[fieldCount][];
    for (int f = 0; f < fieldCount; f++) {
      out[f] = new float[indices.length * fields.get(f).width()];
      Arrays.fill(out[f], UNTOUCHED);
    }

    int[] missing = BlockGather.gather(spec, blocks, "p", indices, out);

    List<Integer> expectedMissing = new ArrayList<>();
    for (int i = 0; i < indices.length; i++) {
      Block block = blocks.get(spec.rangeOf(indices[i]));
      boolean present = block != null && block.isPresent(indices[i]);
      if (!present) {
        expectedMissing.add(i);
      }
      for (int f = 0; f < fieldCount; f++) {
        int width = fields.get(f).width();
        float[] expected = new float[width];
        if (present) {
          block.copyValues(f, indices[i], expected, 0);
        } else {
          Arrays.fill(expected, UNTOUCHED);
        }
        assertArrayEquals(
            expected, Arrays.copyOfRange(out[f], i * width, (i + 1) * width), "position " + i);
      }
    }
    assertArrayEquals(expectedMissing.stream().mapToInt(Integer::intValue).toArray(), missing);
  }

  private static Block randomBlock(
      CacheSpec spec, int range, int presentPercent, SplittableRandom r) {
    Block b = Block.empty(spec, range);
    for (long i = b.start(); i < b.start() + b.length(); i++) {
      if (r.nextInt(100) < presentPercent) {
        float[][] row = new float[spec.fields().size()][];
        for (int f = 0; f < row.length; f++) {
          row[f] = new float[spec.fields().get(f).width()];
          for (int k = 0; k < row[f].length; k++) {
            // the sentinel now and then: a present -inf must be served, not reported missing
            row[f][k] = r.nextInt(5) == 0 ? Block.SENTINEL : (float) r.nextGaussian();
          }
        }
        b.put(i, row);
      }
    }
    return b;
  }

  private static float[][] filled(int fields, int count) {
    float[][] out = new float[fields][count];
    for (float[] o : out) {
      Arrays.fill(o, UNTOUCHED);
    }
    return out;
  }
}
