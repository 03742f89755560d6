package org.tensorcache.model.runner;

import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;

/**
 * The checked output of a runner of per-token fields for one batch: per example its token count,
 * and per field and example one flat array of the field's dtype ({@code int[]} for I32, {@code
 * float[]} for F32) holding {@code tokens * width} values, token after token. It can only be built
 * through {@link #validated}, so an instance never holds NaN or a wrong length.
 */
public final class TokenOutput {
  private final List<FieldSpec> fields;
  private final long[] indices;
  private final int[] tokens;
  private final Object[][] values;

  private TokenOutput(List<FieldSpec> fields, long[] indices, int[] tokens, Object[][] values) {
    this.fields = fields;
    this.indices = indices;
    this.tokens = tokens;
    this.values = values;
  }

  /**
   * Checks {@code values[field][example]} against the per-token field specs and the token counts
   * and returns the output; the error names the runner, the example index and the field.
   */
  public static TokenOutput validated(
      String runner, List<FieldSpec> fields, long[] indices, int[] tokens, Object[][] values) {
    if (tokens.length != indices.length || values.length != fields.size()) {
      throw new InvalidRunnerOutputException(
          -1,
          String.format(
              "runner '%s' returned %d token counts and %d fields for %d examples, expected %d"
                  + " and %s",
              runner, tokens.length, values.length, indices.length, indices.length, fields));
    }
    for (int i = 0; i < indices.length; i++) {
      if (tokens[i] < 1) {
        throw new InvalidRunnerOutputException(
            indices[i],
            String.format(
                "runner '%s' returned %d tokens for example %d, expected at least 1",
                runner, tokens[i], indices[i]));
      }
    }
    for (int f = 0; f < fields.size(); f++) {
      FieldSpec field = fields.get(f);
      if (!field.perToken() || (field.dtype() != DType.F32 && field.dtype() != DType.I32)) {
        throw new IllegalArgumentException(
            "field " + field + " of runner '" + runner + "' is not a per-token F32 or I32 field");
      }
      if (values[f] == null || values[f].length != indices.length) {
        throw new InvalidRunnerOutputException(
            -1,
            String.format(
                "runner '%s' returned field '%s' for %d examples, expected %d",
                runner, field.name(), values[f] == null ? 0 : values[f].length, indices.length));
      }
      for (int i = 0; i < indices.length; i++) {
        check(runner, field, indices[i], (long) tokens[i] * field.width(), values[f][i]);
      }
    }
    return new TokenOutput(List.copyOf(fields), indices.clone(), tokens.clone(), values);
  }

  private static void check(String runner, FieldSpec field, long index, long expected, Object v) {
    boolean floats = field.dtype() == DType.F32;
    int length = -1;
    if (floats && v instanceof float[] a) {
      length = a.length;
    } else if (!floats && v instanceof int[] a) {
      length = a.length;
    }
    if (length != expected) {
      String got = v == null ? "nothing" : v.getClass().getSimpleName() + " of " + lengthOf(v);
      throw new InvalidRunnerOutputException(
          index,
          String.format(
              "runner '%s' returned %s for field '%s' of example %d, expected %s of %d values",
              runner, got, field.name(), index, floats ? "float[]" : "int[]", expected));
    }
    if (floats) {
      float[] a = (float[]) v;
      for (int k = 0; k < a.length; k++) {
        if (Float.isNaN(a[k])) {
          throw new InvalidRunnerOutputException(
              index,
              String.format(
                  "runner '%s' returned NaN for field '%s' of example %d (element %d)",
                  runner, field.name(), index, k));
        }
      }
    }
  }

  private static int lengthOf(Object v) {
    return v instanceof float[] a ? a.length : v instanceof int[] a ? a.length : -1;
  }

  /** The fields, in the runner's order. */
  public List<FieldSpec> fields() {
    return fields;
  }

  /** Number of examples. */
  public int size() {
    return indices.length;
  }

  /** The example index of row {@code row}. */
  public long index(int row) {
    return indices[row];
  }

  /** The token count of row {@code row}. */
  public int tokens(int row) {
    return tokens[row];
  }

  /**
   * The values of field number {@code field} for row {@code row}: int[] or float[]; do not modify.
   */
  public Object value(int field, int row) {
    return values[field][row];
  }

  /** The values of the named I32 field for row {@code row}; do not modify. */
  public int[] ints(String field, int row) {
    return (int[]) values[position(field, DType.I32)][row];
  }

  /** The values of the named F32 field for row {@code row}; do not modify. */
  public float[] floats(String field, int row) {
    return (float[]) values[position(field, DType.F32)][row];
  }

  private int position(String name, DType dtype) {
    for (int f = 0; f < fields.size(); f++) {
      if (fields.get(f).name().equals(name) && fields.get(f).dtype() == dtype) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "no " + dtype + " field '" + name + "', expected one of " + fields);
  }
}
