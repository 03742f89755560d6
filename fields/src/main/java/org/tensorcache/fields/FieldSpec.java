package org.tensorcache.fields;

import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * One named per-example tensor: its dtype and its per-example shape ({@code []} for a scalar such
 * as {@code chosen_logp}, {@code [64]} for a feature vector).
 */
public record FieldSpec(String name, DType dtype, int[] shape) {
  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,63}");

  /** Validates the name and shape. */
  public FieldSpec {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "field name '" + name + "' is invalid, expected [a-z][a-z0-9_]{0,63}");
    }
    if (dtype == null) {
      throw new IllegalArgumentException("field '" + name + "' has no dtype");
    }
    shape = shape.clone();
    for (int d : shape) {
      if (d <= 0) {
        throw new IllegalArgumentException(
            "field '" + name + "' has shape " + Arrays.toString(shape) + ", expected dims > 0");
      }
    }
  }

  /** A float32 scalar per example. */
  public static FieldSpec scalar(String name) {
    return new FieldSpec(name, DType.F32, new int[0]);
  }

  /** A float32 vector of {@code size} per example. */
  public static FieldSpec vector(String name, int size) {
    return new FieldSpec(name, DType.F32, new int[] {size});
  }

  /** Number of elements per example (1 for a scalar). */
  public int width() {
    long w = 1;
    for (int d : shape) {
      w *= d; // below 2^62: both factors are below 2^31
      if (w > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "field '"
                + name
                + "' is too large per example: shape "
                + Arrays.toString(shape)
                + ", expected at most 2^31-1 elements");
      }
    }
    return (int) w;
  }

  @Override
  public int[] shape() {
    return shape.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FieldSpec f
        && f.name.equals(name)
        && f.dtype == dtype
        && Arrays.equals(f.shape, shape);
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + Arrays.hashCode(shape);
  }

  @Override
  public String toString() {
    return name + ": " + dtype.safetensorsName() + " " + Arrays.toString(shape);
  }
}
