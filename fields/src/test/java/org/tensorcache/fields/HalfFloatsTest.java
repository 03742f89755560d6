package org.tensorcache.fields;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HalfFloatsTest {
  @Test
  void everyF16PatternSurvivesTheRoundTrip() {
    for (int h = 0; h < 0x10000; h++) {
      float f = HalfFloats.f16ToFloat((short) h);
      if (Float.isNaN(f)) {
        assertTrue((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0, "NaN from " + h);
        continue;
      }
      assertEquals((short) h, HalfFloats.floatToF16(f), "pattern 0x" + Integer.toHexString(h));
    }
  }

  @Test
  void everyBf16PatternSurvivesTheRoundTrip() {
    for (int h = 0; h < 0x10000; h++) {
      float f = HalfFloats.bf16ToFloat((short) h);
      if (!Float.isNaN(f)) {
        assertEquals((short) h, HalfFloats.floatToBf16(f), "pattern 0x" + Integer.toHexString(h));
      }
    }
  }

  @Test
  void f16RoundsToNearestEven() {
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 200_000; i++) {
      float f =
          i % 2 == 0
              ? (float) (random.nextDouble(-70_000, 70_000))
              : Float.intBitsToFloat(random.nextInt());
      if (Float.isNaN(f)) {
        continue;
      }
      checkNearest(f, HalfFloats.floatToF16(f), true);
    }
    for (int h = 0; h < 0x7bff; h++) { // midpoints between neighbouring positive halves
      double mid =
          ((double) HalfFloats.f16ToFloat((short) h) + HalfFloats.f16ToFloat((short) (h + 1))) / 2;
      short rounded = HalfFloats.floatToF16((float) mid);
      assertEquals((h & 1) == 0 ? h : h + 1, rounded, "midpoint above 0x" + Integer.toHexString(h));
    }
  }

  @Test
  void bf16RoundsToNearestEven() {
    SplittableRandom random = new SplittableRandom(5);
    for (int i = 0; i < 200_000; i++) {
      float f = Float.intBitsToFloat(random.nextInt());
      if (!Float.isNaN(f) && !Float.isInfinite(f)) {
        checkNearest(f, HalfFloats.floatToBf16(f), false);
      }
    }
    assertEquals(0x3f80, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3f808000))); // tie, even
    assertEquals(0x3f82, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3f818000))); // tie, up
    assertEquals((short) 0x7fc0, HalfFloats.floatToBf16(Float.NaN));
  }

  @Test
  void infinitiesAndTheSentinels() {
    assertEquals(Float.NEGATIVE_INFINITY, HalfFloats.f16ToFloat(HalfFloats.F16_NEG_INF));
    assertEquals(Float.NEGATIVE_INFINITY, HalfFloats.bf16ToFloat(HalfFloats.BF16_NEG_INF));
    assertEquals((short) 0x7c00, HalfFloats.floatToF16(65520f));
    assertEquals((short) 0x7bff, HalfFloats.floatToF16(65519f));
    assertEquals((short) 0xfc00, HalfFloats.floatToF16(-1e9f));
  }

  private static void checkNearest(float f, short h, boolean f16) {
    double value = f16 ? HalfFloats.f16ToFloat(h) : HalfFloats.bf16ToFloat(h);
    double error = Math.abs(value - f);
    for (int step : new int[] {-1, 1}) {
      short other = (short) (h + step);
      double o = f16 ? HalfFloats.f16ToFloat(other) : HalfFloats.bf16ToFloat(other);
      if (Double.isNaN(o) || Double.isInfinite(o) || Double.isInfinite(value)) {
        continue;
      }
      double otherError = Math.abs(o - f);
      assertTrue(
          error < otherError || (error == otherError && (h & 1) == 0),
          f + " became 0x" + Integer.toHexString(h & 0xffff) + ", a neighbour is nearer");
    }
  }
}
