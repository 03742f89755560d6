package org.tensorcache.actors.lookup;

import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/** The checks of a lookup request, made before anything is asked of the cluster. */
public final class LookupChecks {
  private LookupChecks() {}

  /** Throws an IllegalArgumentException naming the first bad part of the request. */
  public static void check(String cacheId, CacheSpec spec, long[] indices, NodeSettings settings) {
    checkSize(cacheId, indices, settings);
    for (long index : indices) {
      if (index < 0 || index >= spec.n()) {
        throw new IllegalArgumentException(
            String.format(
                "index %d out of range [0, %d) for cache '%s'", index, spec.n(), cacheId));
      }
    }
  }

  /** Checks the number of indices only; the gather checks each index as it reads it. */
  public static void checkSize(String cacheId, long[] indices, NodeSettings settings) {
    if (indices == null || indices.length == 0) {
      throw new IllegalArgumentException(
          "empty batch for cache '"
              + cacheId
              + "', expected 1.."
              + settings.maxBatch()
              + " indices");
    }
    if (indices.length > settings.maxBatch()) {
      throw new IllegalArgumentException(
          String.format(
              "batch of %d indices for cache '%s' is over the maximum %d",
              indices.length, cacheId, settings.maxBatch()));
    }
  }

  /** Bytes of one example's values, all fields. */
  public static int rowBytes(CacheSpec spec) {
    int bytes = 0;
    for (FieldSpec f : spec.fields()) {
      bytes += f.width() * f.dtype().bytes();
    }
    return bytes;
  }

  /**
   * Checks that {@code out} has one array per field, of the field's dtype ({@link FieldArrays}),
   * each large enough for {@code count} rows.
   */
  public static void checkBuffers(String cacheId, CacheSpec spec, int count, Object[] out) {
    if (out == null || out.length != spec.fields().size()) {
      throw new IllegalArgumentException(
          String.format(
              "%s output arrays for cache '%s', expected one per field %s",
              out == null ? "no" : Integer.toString(out.length), cacheId, spec.fields()));
    }
    for (int f = 0; f < out.length; f++) {
      FieldSpec field = spec.fields().get(f);
      int need = count * field.width();
      if (!FieldArrays.isArrayOf(field.dtype(), out[f])) {
        throw new IllegalArgumentException(
            String.format(
                "output array of field '%s' (%s) is %s, expected %s",
                field.name(),
                field.dtype().safetensorsName(),
                FieldArrays.javaType(out[f]),
                FieldArrays.javaType(field.dtype().newArray(0))));
      }
      int length = FieldArrays.length(out[f]);
      if (length < need) {
        throw new IllegalArgumentException(
            String.format(
                "output array of field '%s' holds %d elements, expected at least %d",
                field.name(), length, need));
      }
    }
  }

  /**
   * New arrays for the values of {@code count} rows: per field, {@code count * width} elements of
   * its dtype.
   */
  public static Object[] newValues(CacheSpec spec, int count) {
    Object[] values = new Object[spec.fields().size()];
    for (int f = 0; f < values.length; f++) {
      FieldSpec field = spec.fields().get(f);
      values[f] = field.dtype().newArray(count * field.width());
    }
    return values;
  }
}
