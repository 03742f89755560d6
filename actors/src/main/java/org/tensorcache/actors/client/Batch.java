package org.tensorcache.actors.client;

import org.tensorcache.actors.lookup.LookupChecks;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The values of a batch of indices: per field, {@code indices.length * width} elements of the
 * field's dtype, row-major in request order. The typed accessors name the field and check its
 * dtype: {@link #floats} for F32, {@link #shorts} for the bit patterns of F16 and BF16, {@link
 * #ints} for I32, {@link #longs} for I64; {@link #asFloats} converts any of them.
 */
public record Batch(CacheSpec spec, long[] indices, Object[] values) {
  /** New arrays for the values of {@code count} rows of {@code spec}, for a lookup into them. */
  public static Object[] newValues(CacheSpec spec, int count) {
    return LookupChecks.newValues(spec, count);
  }

  /** The values of an F32 field. */
  public float[] floats(String name) {
    return (float[]) typed(name, DType.F32);
  }

  /** The bit patterns of an F16 or BF16 field ({@link org.tensorcache.fields.HalfFloats}). */
  public short[] shorts(String name) {
    FieldSpec f = spec.fields().get(spec.fieldIndex(name));
    return (short[]) typed(name, f.dtype() == DType.BF16 ? DType.BF16 : DType.F16);
  }

  /** The values of an I32 field. */
  public int[] ints(String name) {
    return (int[]) typed(name, DType.I32);
  }

  /** The values of an I64 field. */
  public long[] longs(String name) {
    return (long[]) typed(name, DType.I64);
  }

  /**
   * The values of any field as floats: exact for F32, F16, BF16 and integers up to 2^24 in
   * magnitude, rounded beyond. A new array.
   */
  public float[] asFloats(String name) {
    int f = spec.fieldIndex(name);
    DType t = spec.fields().get(f).dtype();
    Object v = values[f];
    float[] out = new float[FieldArrays.length(v)];
    for (int k = 0; k < out.length; k++) {
      out[k] = FieldArrays.asFloat(t, v, k);
    }
    return out;
  }

  private Object typed(String name, DType expected) {
    int f = spec.fieldIndex(name);
    DType t = spec.fields().get(f).dtype();
    if (t != expected) {
      throw new IllegalArgumentException(
          String.format(
              "field '%s' of cache '%s' is %s, not %s: use the accessor of its dtype or asFloats",
              name, spec.name(), t.safetensorsName(), expected.safetensorsName()));
    }
    return values[f];
  }
}
