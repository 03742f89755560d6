package org.tensorcache.bench.tiers;

import java.util.Arrays;
import org.tensorcache.bench.fixture.FeatureRunner;
import org.tensorcache.fields.HalfFloats;

/**
 * Every value of the cache as the runner defines it, in a plain {@code short[]} of BF16 bit
 * patterns, row after row: what each lookup is checked against, and the gather from it is the
 * physical limit of a lookup (copying B rows of memory, no tiers, no checks).
 */
public final class PlainArray {
  private final short[] values;
  private final int width;

  private PlainArray(short[] values, int width) {
    this.values = values;
    this.width = width;
  }

  /** The values of {@code n} examples of {@code width} elements of {@link FeatureRunner}. */
  public static PlainArray of(long seed, int n, int width) {
    short[] values = new short[Math.multiplyExact(n, width)];
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < width; k++) {
        values[i * width + k] = HalfFloats.floatToBf16(FeatureRunner.value(seed, i, k));
      }
    }
    return new PlainArray(values, width);
  }

  /** Copies the rows of {@code indices} into {@code out}, in order: the plain array gather. */
  public void gather(long[] indices, short[] out) {
    for (int i = 0; i < indices.length; i++) {
      System.arraycopy(values, (int) indices[i] * width, out, i * width, width);
    }
  }

  /**
   * Checks that {@code got} holds the rows of {@code indices} bit for bit.
   *
   * @throws IllegalStateException naming the first wrong element and what was expected
   */
  public void check(String what, long[] indices, short[] got) {
    if (got.length != indices.length * width) {
      throw new IllegalStateException(
          String.format(
              "%s: %d values for %d rows, expected %d",
              what, got.length, indices.length, indices.length * width));
    }
    for (int i = 0; i < indices.length; i++) {
      int from = (int) indices[i] * width;
      if (!Arrays.equals(values, from, from + width, got, i * width, (i + 1) * width)) {
        int k = Arrays.mismatch(values, from, from + width, got, i * width, (i + 1) * width);
        throw new IllegalStateException(
            String.format(
                "%s: index %d element %d is bf16 0x%04x, expected 0x%04x",
                what, indices[i], k, got[i * width + k], values[from + k]));
      }
    }
  }
}
