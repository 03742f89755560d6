package org.tensorcache.model.runner;

import java.util.List;
import org.tensorcache.fields.FieldSpec;

/**
 * The checked output of a runner for one batch: per field, per example, the flat values. It can
 * only be built through {@link #validated}, so an instance never holds NaN or a wrong shape.
 */
public final class RunnerOutput {
  private final List<FieldSpec> fields;
  private final long[] indices;
  private final float[][][] values;

  private RunnerOutput(List<FieldSpec> fields, long[] indices, float[][][] values) {
    this.fields = fields;
    this.indices = indices;
    this.values = values;
  }

  /**
   * Checks {@code values[field][example]} against the field specs and returns the output; the error
   * names the runner, the example index and the field.
   */
  public static RunnerOutput validated(
      String runner, List<FieldSpec> fields, long[] indices, float[][][] values) {
    if (values.length != fields.size()) {
      throw new InvalidRunnerOutputException(
          -1,
          "runner '"
              + runner
              + "' returned "
              + values.length
              + " fields, expected "
              + fields.size()
              + " "
              + fields);
    }
    for (int f = 0; f < fields.size(); f++) {
      FieldSpec field = fields.get(f);
      if (values[f] == null || values[f].length != indices.length) {
        int got = values[f] == null ? 0 : values[f].length;
        throw new InvalidRunnerOutputException(
            -1,
            String.format(
                "runner '%s' returned field '%s' for %d examples, expected %d",
                runner, field.name(), got, indices.length));
      }
      int width = field.width();
      for (int i = 0; i < indices.length; i++) {
        float[] v = values[f][i];
        if (v == null || v.length != width) {
          throw new InvalidRunnerOutputException(
              indices[i],
              String.format(
                  "runner '%s' returned %d values for field '%s' of example %d, expected %s",
                  runner, v == null ? 0 : v.length, field.name(), indices[i], field));
        }
        for (int k = 0; k < width; k++) {
          if (Float.isNaN(v[k])) {
            throw new InvalidRunnerOutputException(
                indices[i],
                String.format(
                    "runner '%s' returned NaN for field '%s' of example %d (element %d)",
                    runner, field.name(), indices[i], k));
          }
        }
      }
    }
    return new RunnerOutput(List.copyOf(fields), indices.clone(), values);
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

  /** The values of field number {@code field} for row {@code row}; do not modify. */
  public float[] value(int field, int row) {
    return values[field][row];
  }

  /** The values of the named field for row {@code row}; do not modify. */
  public float[] value(String field, int row) {
    for (int f = 0; f < fields.size(); f++) {
      if (fields.get(f).name().equals(field)) {
        return values[f][row];
      }
    }
    throw new IllegalArgumentException("unknown field '" + field + "', expected one of " + fields);
  }

  /** Every field's values of row {@code row}, in field order; do not modify. */
  public float[][] row(int row) {
    float[][] r = new float[values.length][];
    for (int f = 0; f < values.length; f++) {
      r[f] = values[f][row];
    }
    return r;
  }
}
