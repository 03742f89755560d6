package org.tensorcache.bench.tiers;

import java.util.Arrays;
import org.tensorcache.bench.fixture.FeatureRunner;
import org.tensorcache.fields.HalfFloats;

/**
 * Every value of the cache as the runner defines it, BF16 bit patterns row after row: what each
 * lookup is checked against, and its gather is a lookup's physical limit (B rows copied, no tiers).
 */
public final class PlainArray {
  private final short[] values;
  private final int width;

  /** The values of {@code n} examples of {@code width} elements of {@link FeatureRunner}. */
  public PlainArray(long seed, int n, int width) {
    this.values = new short[Math.multiplyExact(n, width)];
    this.width = width;
    for (int i = 0; i < values.length; i++) {
      values[i] = HalfFloats.floatToBf16(FeatureRunner.value(seed, i / width, i % width));
    }
  }

  /** Copies the rows of {@code indices} into {@code out}, in order: the plain array gather. */
  void gather(long[] indices, short[] out) {
    for (int i = 0; i < indices.length; i++) {
      System.arraycopy(values, (int) indices[i] * width, out, i * width, width);
    }
  }

  /** Checks that {@code got} holds the rows of {@code indices} bit for bit, or names the first. */
  void check(String what, long[] indices, short[] got) {
    if (got.length != indices.length * width) {
      throw new IllegalStateException(
          what + ": " + got.length + " values, expected rows of " + width);
    }
    for (int i = 0; i < indices.length; i++) {
      int from = (int) indices[i] * width;
      int k = Arrays.mismatch(values, from, from + width, got, i * width, (i + 1) * width);
      if (k >= 0) {
        throw new IllegalStateException(
            String.format(
                "%s: index %d element %d is bf16 0x%04x, expected 0x%04x",
                what, indices[i], k, got[i * width + k], values[from + k]));
      }
    }
  }
}
