package org.tensorcache.fields;

/**
 * Conversions between {@code float} and the 16-bit floating types, as bit patterns in a {@code
 * short}: float to half rounds to nearest, ties to even, as PyTorch and numpy do, so a value cached
 * as F16 or BF16 is the one those libraries would store.
 */
public final class HalfFloats {
  /** The F16 and BF16 patterns of -inf: what a missing example holds. */
  public static final short F16_NEG_INF = (short) 0xfc00, BF16_NEG_INF = (short) 0xff80;

  private HalfFloats() {}

  /** The float a BF16 pattern encodes (exact). */
  public static float bf16ToFloat(short bits) {
    return Float.intBitsToFloat((bits & 0xffff) << 16);
  }

  /** The BF16 pattern nearest to {@code f}; NaN becomes the quiet NaN 0x7fc0. */
  public static short floatToBf16(float f) {
    int bits = Float.floatToRawIntBits(f);
    if ((bits & 0x7fffffff) > 0x7f800000) {
      return (short) 0x7fc0;
    }
    int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
    return (short) (rounded >>> 16);
  }

  /** The float an F16 pattern encodes (exact). */
  public static float f16ToFloat(short h) {
    int bits = h & 0xffff;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    if (exp == 0) {
      // subnormal (or zero): mant * 2^-24, exact in a float
      float v = mant * 0x1p-24f;
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }

  /** The F16 pattern nearest to {@code f}, ties to even; beyond the range it is +-inf. */
  public static short floatToF16(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int abs = bits & 0x7fffffff;
    if (abs > 0x7f800000) {
      return (short) (sign | 0x7e00);
    }
    if (abs >= 0x477ff000) { // rounds to 65520 or more: inf
      return (short) (sign | 0x7c00);
    }
    if (abs < 0x38800000) { // below the smallest normal half, 2^-14: subnormal or zero
      // the value in units of 2^-24, rounded to nearest even by the float addition itself
      float scaled = Float.intBitsToFloat(abs) * 0x1p24f;
      int units = Math.round(scaled);
      if (Math.abs(scaled - (units - 0.5f)) == 0 && (units & 1) == 1) {
        units--; // a tie that Math.round sent up to an odd value
      }
      return (short) (sign | units);
    }
    int mant = abs & 0x7fffff;
    int exp = (abs >>> 23) - 112;
    int half = (exp << 10) | (mant >>> 13);
    int rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1) == 1)) {
      half++; // may carry into the exponent, which is right
    }
    return (short) (sign | half);
  }
}
