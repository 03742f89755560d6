package org.tensorcache.fields;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Operations on the element arrays of a field, one per {@link DType}: {@code float[]} for F32,
 * {@code short[]} of bit patterns for F16 and BF16, {@code int[]} for I32, {@code long[]} for I64.
 * What every dtype shares (copies, equality) is {@link System#arraycopy} or {@link Arrays}; what
 * depends on the dtype (the sentinel, NaN, MAX, conversions) is here, in one place.
 */
public final class FieldArrays {
  private FieldArrays() {}

  /** An array of {@code n} elements of {@code t}, every one the sentinel of a missing example. */
  public static Object sentinels(DType t, int n) {
    Object a = t.newArray(n);
    fillSentinel(t, a, 0, n);
    return a;
  }

  /** Sets elements {@code [from, to)} of {@code a} to the sentinel of {@code t}. */
  public static void fillSentinel(DType t, Object a, int from, int to) {
    switch (t) {
      case F32 -> Arrays.fill((float[]) a, from, to, Float.NEGATIVE_INFINITY);
      case F16 -> Arrays.fill((short[]) a, from, to, HalfFloats.F16_NEG_INF);
      case BF16 -> Arrays.fill((short[]) a, from, to, HalfFloats.BF16_NEG_INF);
      case I32 -> Arrays.fill((int[]) a, from, to, Integer.MIN_VALUE);
      case I64 -> Arrays.fill((long[]) a, from, to, Long.MIN_VALUE);
    }
  }

  /** Whether element {@code k} of {@code a} has exactly the sentinel's bits. */
  public static boolean isSentinel(DType t, Object a, int k) {
    return switch (t) {
      case F32 -> Float.floatToRawIntBits(((float[]) a)[k]) == SENTINEL_BITS;
      case F16 -> ((short[]) a)[k] == HalfFloats.F16_NEG_INF;
      case BF16 -> ((short[]) a)[k] == HalfFloats.BF16_NEG_INF;
      case I32 -> ((int[]) a)[k] == Integer.MIN_VALUE;
      case I64 -> ((long[]) a)[k] == Long.MIN_VALUE;
    };
  }

  /** Whether element {@code k} of {@code a} is a NaN (never for integer dtypes). */
  public static boolean isNaN(DType t, Object a, int k) {
    return switch (t) {
      case F32 -> Float.isNaN(((float[]) a)[k]);
      case F16 -> Float.isNaN(HalfFloats.f16ToFloat(((short[]) a)[k]));
      case BF16 -> Float.isNaN(HalfFloats.bf16ToFloat(((short[]) a)[k]));
      case I32, I64 -> false;
    };
  }

  /** Element {@code k} of {@code a} as a float, for messages and for readers that want floats. */
  public static float asFloat(DType t, Object a, int k) {
    return switch (t) {
      case F32 -> ((float[]) a)[k];
      case F16 -> HalfFloats.f16ToFloat(((short[]) a)[k]);
      case BF16 -> HalfFloats.bf16ToFloat(((short[]) a)[k]);
      case I32 -> ((int[]) a)[k];
      case I64 -> ((long[]) a)[k];
    };
  }

  /** Element {@code k} of {@code a} as text, exact for every dtype. */
  public static String toString(DType t, Object a, int k) {
    return switch (t) {
      case I32 -> Integer.toString(((int[]) a)[k]);
      case I64 -> Long.toString(((long[]) a)[k]);
      default -> Float.toString(asFloat(t, a, k));
    };
  }

  /**
   * Sets {@code dst[k] = max(dst[k], src[k])} for {@code k} in {@code [from, to)}: F16 and BF16
   * compared as the floats they encode ({@code -0 < +0}, as {@link Math#max} orders them), integers
   * as integers.
   */
  public static void maxInto(DType t, Object dst, Object src, int from, int to) {
    switch (t) {
      case F32 -> {
        float[] d = (float[]) dst, s = (float[]) src;
        for (int k = from; k < to; k++) {
          d[k] = Math.max(d[k], s[k]);
        }
      }
      case F16, BF16 -> {
        short[] d = (short[]) dst, s = (short[]) src;
        boolean f16 = t == DType.F16;
        for (int k = from; k < to; k++) {
          if (d[k] != s[k] && compareHalves(f16, s[k], d[k]) > 0) {
            d[k] = s[k];
          }
        }
      }
      case I32 -> {
        int[] d = (int[]) dst, s = (int[]) src;
        for (int k = from; k < to; k++) {
          d[k] = Math.max(d[k], s[k]);
        }
      }
      case I64 -> {
        long[] d = (long[]) dst, s = (long[]) src;
        for (int k = from; k < to; k++) {
          d[k] = Math.max(d[k], s[k]);
        }
      }
    }
  }

  /**
   * Whether {@code v}, a runner's float, can be stored as {@code t} without becoming something else
   * than what the runner meant: any non-NaN for floating dtypes (F16 and BF16 round to nearest), an
   * integer within range for I32 and I64. Returns null when it can, else what was expected.
   */
  public static String checkFloat(DType t, float v) {
    if (Float.isNaN(v)) {
      return "a number";
    }
    return switch (t) {
      case F32, F16, BF16 -> null;
      case I32 ->
          v == Math.rint(v) && v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE
              ? null
              : "an integer within the range of I32";
      case I64 ->
          v == Math.rint(v) && v >= Long.MIN_VALUE && v <= Long.MAX_VALUE
              ? null
              : "an integer within the range of I64";
    };
  }

  /**
   * Stores the runner's floats {@code v} (checked by {@link #checkFloat}) into {@code dst} from
   * {@code off}, each the MAX of it and the element there when {@code maxWithOld}.
   */
  public static void putFloats(DType t, Object dst, int off, float[] v, boolean maxWithOld) {
    switch (t) {
      case F32 -> {
        float[] d = (float[]) dst;
        for (int k = 0; k < v.length; k++) {
          d[off + k] = maxWithOld ? Math.max(d[off + k], v[k]) : v[k];
        }
      }
      case F16, BF16 -> {
        short[] d = (short[]) dst;
        boolean f16 = t == DType.F16;
        for (int k = 0; k < v.length; k++) {
          short h = f16 ? HalfFloats.floatToF16(v[k]) : HalfFloats.floatToBf16(v[k]);
          if (!maxWithOld || compareHalves(f16, h, d[off + k]) > 0) {
            d[off + k] = h;
          }
        }
      }
      case I32 -> {
        int[] d = (int[]) dst;
        for (int k = 0; k < v.length; k++) {
          d[off + k] = maxWithOld ? Math.max(d[off + k], (int) v[k]) : (int) v[k];
        }
      }
      case I64 -> {
        long[] d = (long[]) dst;
        for (int k = 0; k < v.length; k++) {
          d[off + k] = maxWithOld ? Math.max(d[off + k], (long) v[k]) : (long) v[k];
        }
      }
    }
  }

  /** Number of elements of a field array. */
  public static int length(Object a) {
    return java.lang.reflect.Array.getLength(a);
  }

  /** Bit-for-bit equality of two field arrays of the same dtype. */
  public static boolean equal(Object a, Object b) {
    return Arrays.deepEquals(new Object[] {a}, new Object[] {b});
  }

  /** A hash consistent with {@link #equal}. */
  public static int hash(Object a) {
    return Arrays.deepHashCode(new Object[] {a});
  }

  /** A copy of a field array. */
  public static Object copyOf(Object a) {
    int n = length(a);
    Object c = java.lang.reflect.Array.newInstance(a.getClass().getComponentType(), n);
    System.arraycopy(a, 0, c, 0, n);
    return c;
  }

  /** Writes {@code n} elements of {@code src} from {@code off} into {@code dst} (little-endian). */
  public static void write(DType t, Object src, int off, int n, ByteBuffer dst) {
    ByteBuffer b =
        dst.order() == ByteOrder.LITTLE_ENDIAN
            ? dst
            : dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    switch (t) {
      case F32 -> b.asFloatBuffer().put((float[]) src, off, n);
      case F16, BF16 -> b.asShortBuffer().put((short[]) src, off, n);
      case I32 -> b.asIntBuffer().put((int[]) src, off, n);
      case I64 -> b.asLongBuffer().put((long[]) src, off, n);
    }
    dst.position(dst.position() + n * t.bytes());
  }

  /** Reads {@code n} elements into {@code dst} from {@code off} out of {@code src} (LE). */
  public static void read(DType t, ByteBuffer src, Object dst, int off, int n) {
    ByteBuffer b =
        src.order() == ByteOrder.LITTLE_ENDIAN
            ? src
            : src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    switch (t) {
      case F32 -> b.asFloatBuffer().get((float[]) dst, off, n);
      case F16, BF16 -> b.asShortBuffer().get((short[]) dst, off, n);
      case I32 -> b.asIntBuffer().get((int[]) dst, off, n);
      case I64 -> b.asLongBuffer().get((long[]) dst, off, n);
    }
    src.position(src.position() + n * t.bytes());
  }

  /** The dtype whose Java element array {@code a} is, where one dtype has it; for messages. */
  public static String javaType(Object a) {
    return a == null ? "null" : a.getClass().getComponentType() + "[]";
  }

  /** Whether {@code a} is an array of the Java element type of {@code t}. */
  public static boolean isArrayOf(DType t, Object a) {
    return switch (t) {
      case F32 -> a instanceof float[];
      case F16, BF16 -> a instanceof short[];
      case I32 -> a instanceof int[];
      case I64 -> a instanceof long[];
    };
  }

  private static int compareHalves(boolean f16, short a, short b) {
    return f16
        ? Float.compare(HalfFloats.f16ToFloat(a), HalfFloats.f16ToFloat(b))
        : Float.compare(HalfFloats.bf16ToFloat(a), HalfFloats.bf16ToFloat(b));
  }

  private static final int SENTINEL_BITS = Float.floatToRawIntBits(Float.NEGATIVE_INFINITY);
}
