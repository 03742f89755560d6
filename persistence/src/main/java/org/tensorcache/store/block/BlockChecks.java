package org.tensorcache.store.block;

import java.lang.reflect.Array;
import java.util.Arrays;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Validation of what enters a block, done in full before anything is changed, and the errors of
 * what is asked of one, each naming the bad value and what was expected.
 */
final class BlockChecks {
  private static final int SENTINEL_BITS = Float.floatToRawIntBits(Block.SENTINEL);

  private BlockChecks() {}

  /**
   * Checks one example's values as a runner gives them: one float array per field, of the field's
   * width, without NaN, and integers for integer dtypes.
   */
  static void checkRow(CacheSpec spec, long index, float[][] perFieldValues) {
    int fieldCount = spec.fields().size();
    if (perFieldValues == null || perFieldValues.length != fieldCount) {
      throw err(
          "index %d: %s field arrays, expected %d for cache '%s'",
          index, len(perFieldValues), fieldCount, spec.name());
    }
    for (int f = 0; f < fieldCount; f++) {
      FieldSpec field = spec.fields().get(f);
      float[] v = perFieldValues[f];
      if (v == null || v.length != field.width()) {
        throw err(
            "index %d: field '%s' has %s values, expected width %d (shape %s)",
            index, field.name(), len(v), field.width(), Arrays.toString(field.shape()));
      }
      for (int k = 0; k < v.length; k++) {
        String expected = FieldArrays.checkFloat(field.dtype(), v[k]);
        if (expected != null) {
          throw err(
              "index %d: field '%s' (%s) element %d is %s, expected %s",
              index, field.name(), field.dtype().safetensorsName(), k, v[k], expected);
        }
      }
    }
  }

  /**
   * Checks a codec's raw arrays: their sizes, no presence bit beyond the range, no NaN in a present
   * example and exactly the sentinel in a missing one.
   */
  static void checkRaw(
      CacheSpec spec, int range, long start, int length, Object[] values, long[] presence) {
    int fieldCount = spec.fields().size();
    if (values == null || values.length != fieldCount) {
      throw err("%s value arrays for range %d, expected %d", len(values), range, fieldCount);
    }
    int words = Presence.wordsFor(length);
    if (presence == null || presence.length != words) {
      throw err("%s presence words for range %d, expected %d", len(presence), range, words);
    }
    if (length % 64 != 0 && (presence[words - 1] >>> (length % 64)) != 0) {
      throw err("presence bits set beyond length %d of range %d", length, range);
    }
    for (int f = 0; f < fieldCount; f++) {
      FieldSpec field = spec.fields().get(f);
      int width = field.width();
      if (!FieldArrays.isArrayOf(field.dtype(), values[f])) {
        throw err(
            "field '%s' of dtype %s has values of %s for range %d, expected %s",
            field.name(),
            field.dtype().safetensorsName(),
            FieldArrays.javaType(values[f]),
            range,
            FieldArrays.javaType(field.dtype().newArray(0)));
      }
      if (FieldArrays.length(values[f]) != length * width) {
        throw err(
            "field '%s' has %s elements for range %d, expected %d",
            field.name(), len(values[f]), range, length * width);
      }
      if (values[f] instanceof float[] v) {
        checkValues(field, start, length, width, v, presence);
      } else {
        checkElements(field, start, length, width, values[f], presence);
      }
    }
  }

  /** Scans whole words of 64 examples at once where they are all present or all missing. */
  private static void checkValues(
      FieldSpec field, long start, int length, int width, float[] v, long[] presence) {
    for (int i = 0; i < length; i += 64) {
      long word = presence[i >>> 6];
      int end = Math.min(length, i + 64);
      if (word == -1L || word == 0L) {
        boolean allPresent = word == -1L;
        for (int k = i * width, last = end * width; k < last; k++) {
          if (allPresent ? v[k] != v[k] : Float.floatToRawIntBits(v[k]) != SENTINEL_BITS) {
            throw badValue(field, start, k / width, v[k], allPresent);
          }
        }
        continue;
      }
      for (int e = i; e < end; e++) {
        boolean isPresent = (word & (1L << e)) != 0;
        for (int k = e * width, last = k + width; k < last; k++) {
          if (isPresent ? v[k] != v[k] : Float.floatToRawIntBits(v[k]) != SENTINEL_BITS) {
            throw badValue(field, start, e, v[k], isPresent);
          }
        }
      }
    }
  }

  /** {@link #checkValues} for any dtype, an element at a time. */
  private static void checkElements(
      FieldSpec field, long start, int length, int width, Object v, long[] presence) {
    DType t = field.dtype();
    for (int e = 0; e < length; e++) {
      boolean isPresent = (presence[e >>> 6] & (1L << e)) != 0;
      for (int k = e * width, last = k + width; k < last; k++) {
        if (isPresent ? FieldArrays.isNaN(t, v, k) : !FieldArrays.isSentinel(t, v, k)) {
          throw isPresent
              ? err("index %d: field '%s' holds NaN", start + e, field.name())
              : err(
                  "index %d: field '%s' is missing but holds %s, expected the sentinel %s",
                  start + e,
                  field.name(),
                  FieldArrays.toString(t, v, k),
                  FieldArrays.toString(t, FieldArrays.sentinels(t, 1), 0));
        }
      }
    }
  }

  private static IllegalArgumentException badValue(
      FieldSpec field, long start, int local, float value, boolean present) {
    return present
        ? err("index %d: field '%s' holds NaN", start + local, field.name())
        : err(
            "index %d: field '%s' is missing but holds %s, expected the sentinel -inf",
            start + local, field.name(), value);
  }

  /** The error of an index outside {@code block}'s range. */
  static IndexOutOfBoundsException outsideRange(Block block, long index) {
    return new IndexOutOfBoundsException(
        String.format(
            "index %d out of range [%d, %d) of range %d of cache '%s'",
            index,
            block.start(),
            block.start() + block.length(),
            block.range(),
            block.spec().name()));
  }

  /** The error of a field index that {@code block}'s cache does not have. */
  static IndexOutOfBoundsException noSuchField(Block block, int field) {
    return new IndexOutOfBoundsException(
        String.format(
            "field %d out of range [0, %d) for cache '%s'",
            field, block.spec().fields().size(), block.spec().name()));
  }

  /** The error of asking for the values of an example {@code block} does not hold. */
  static IllegalStateException notPresent(Block block, long index) {
    return new IllegalStateException(
        String.format(
            "index %d is not present in range %d of cache '%s'",
            index, block.range(), block.spec().name()));
  }

  private static IllegalArgumentException err(String format, Object... args) {
    return new IllegalArgumentException(String.format(format, args));
  }

  private static String len(Object array) {
    return array == null ? "no" : Integer.toString(Array.getLength(array));
  }
}
