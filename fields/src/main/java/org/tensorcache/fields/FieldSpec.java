package org.tensorcache.fields;

import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * One named per-example tensor: its dtype and its per-example shape ({@code []} for a scalar such
 * as {@code chosen_logp}, {@code [64]} for a feature vector).
 *
 * <p>A per-token field holds {@code [tokens, ...shape]} per example, {@code tokens} varying by
 * example (a teacher's top-k ids for every completion token): {@code shape} is then the shape of
 * one token's value.
 *
 * @param perToken whether the field holds one value of {@code shape} per token of the example
 */
public record FieldSpec(String name, DType dtype, int[] shape, boolean perToken) {
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

  /** A field with one value of {@code shape} per example. */
  public FieldSpec(String name, DType dtype, int[] shape) {
    this(name, dtype, shape, false);
  }

  /** A field with one value of {@code shape} per token of each example. */
  public static FieldSpec perToken(String name, DType dtype, int... shape) {
    return new FieldSpec(name, dtype, shape, true);
  }

  /** A float32 scalar per example. */
  public static FieldSpec scalar(String name) {
    return new FieldSpec(name, DType.F32, new int[0]);
  }

  /** A float32 vector of {@code size} per example. */
  public static FieldSpec vector(String name, int size) {
    return new FieldSpec(name, DType.F32, new int[] {size});
  }

  /** Number of elements per example (1 for a scalar), or per token of a per-token field. */
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
        && Arrays.equals(f.shape, shape)
        && f.perToken == perToken;
  }

  @Override
  public int hashCode() {
    return (name.hashCode() * 31 + Arrays.hashCode(shape)) * 2 + (perToken ? 1 : 0);
  }

  @Override
  public String toString() {
    String dims = Arrays.toString(shape);
    if (perToken) {
      dims = shape.length == 0 ? "[tokens]" : "[tokens, " + dims.substring(1);
    }
    return name + ": " + dtype.safetensorsName() + " " + dims;
  }
}
