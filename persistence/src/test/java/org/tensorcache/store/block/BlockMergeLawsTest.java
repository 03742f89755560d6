package org.tensorcache.store.block;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/** The laws that make blocks a state-based CRDT under merge. */
class BlockMergeLawsTest {
  /** Range 0 has 130 examples, so presence spans three words, the last one partly. */
  private static final CacheSpec SPEC =
      new CacheSpec("laws", 200, List.of(FieldSpec.scalar("a"), FieldSpec.vector("v", 3)), 130);

  private static final int RANGE = 0;
  private static final int WIDTH = 4;

  @Property(tries = 200)
  void mergeIsCommutative(@ForAll("blocks") Block a, @ForAll("blocks") Block b) {
    assertEquals(a.merge(b), b.merge(a));
  }

  @Property(tries = 200)
  void mergeIsAssociative(
      @ForAll("blocks") Block a, @ForAll("blocks") Block b, @ForAll("blocks") Block c) {
    assertEquals(a.merge(b).merge(c), a.merge(b.merge(c)));
  }

  @Property(tries = 200)
  void mergeIsIdempotent(@ForAll("blocks") Block a) {
    assertEquals(a, a.merge(a));
    assertEquals(a, a.merge(a.copy()));
  }

  @Property(tries = 200)
  void emptyIsTheIdentity(@ForAll("blocks") Block a) {
    Block empty = Block.empty(SPEC, RANGE);
    assertEquals(a, a.merge(empty));
    assertEquals(a, empty.merge(a));
  }

  @Property(tries = 200)
  void mergeInPlaceAgreesWithMergeAndLeavesTheArgumentAlone(
      @ForAll("blocks") Block a, @ForAll("blocks") Block b) {
    Block bBefore = b.copy();
    Block target = a.copy();
    target.mergeInPlace(b);
    assertEquals(a.merge(b), target);
    assertEquals(bBefore, b);
    assertEquals(countUnion(a, b), target.presentCount());
  }

  @Property(tries = 200)
  void mergeTakesTheMaxWhereBothHoldAnExampleAndTheHoldersValueElsewhere(
      @ForAll("blocks") Block a, @ForAll("blocks") Block b) {
    Block m = a.merge(b);
    float[] x = new float[WIDTH];
    float[] y = new float[WIDTH];
    float[] got = new float[WIDTH];
    for (long i = a.start(); i < a.start() + a.length(); i++) {
      assertEquals(a.isPresent(i) || b.isPresent(i), m.isPresent(i));
      if (!m.isPresent(i)) {
        continue;
      }
      for (int f = 0; f < 2; f++) {
        int w = f == 0 ? 1 : WIDTH - 1; // the fields: a scalar and a [3] vector
        m.copyValues(f, i, got, 0);
        if (a.isPresent(i)) {
          a.copyValues(f, i, x, 0);
        }
        if (b.isPresent(i)) {
          b.copyValues(f, i, y, 0);
        }
        for (int k = 0; k < w; k++) {
          float want =
              a.isPresent(i) && b.isPresent(i)
                  ? Math.max(x[k], y[k])
                  : a.isPresent(i) ? x[k] : y[k];
          assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(got[k]));
        }
      }
    }
  }

  private static int countUnion(Block a, Block b) {
    int n = 0;
    for (long i = a.start(); i < a.start() + a.length(); i++) {
      n += a.isPresent(i) || b.isPresent(i) ? 1 : 0;
    }
    return n;
  }

  @Provide
  Arbitrary<Block> blocks() {
    Arbitrary<Float> value =
        Arbitraries.frequencyOf(
            Tuple.of(
                2,
                Arbitraries.of(
                    Float.NEGATIVE_INFINITY,
                    Float.POSITIVE_INFINITY,
                    -0.0f,
                    0.0f,
                    1.0f,
                    -1.0f,
                    Float.MIN_VALUE,
                    -Float.MAX_VALUE)),
            Tuple.of(1, Arbitraries.floats().between(-4f, 4f).ofScale(1)));
    int length = SPEC.rangeLength(RANGE);
    Arbitrary<List<Boolean>> presence =
        Arbitraries.integers()
            .between(0, 100)
            .flatMap(
                p -> Arbitraries.integers().between(0, 99).map(x -> x < p).list().ofSize(length));
    return Combinators.combine(presence, value.list().ofSize(length * WIDTH))
        .as(BlockMergeLawsTest::build);
  }

  private static Block build(List<Boolean> presence, List<Float> values) {
    Block b = Block.empty(SPEC, RANGE);
    for (int i = 0; i < presence.size(); i++) {
      if (presence.get(i)) {
        int k = i * WIDTH;
        b.put(
            b.start() + i,
            new float[][] {
              {values.get(k)}, {values.get(k + 1), values.get(k + 2), values.get(k + 3)}
            });
      }
    }
    return b;
  }
}
