package org.tensorcache.fields;

import java.util.List;

/**
 * The values of {@code n} examples of a cache's per-token fields: example {@code i} holds tokens
 * {@code [offsets[i], offsets[i + 1])}, and {@code values[f]} is field f's element array (of its
 * dtype, as {@link FieldArrays} takes them) of {@code offsets[n] * width} elements, every example's
 * tokens in example order.
 */
public record RaggedValues(long[] offsets, Object[] values) {

  /** Checks that the offsets start at 0 and never fall. */
  public RaggedValues {
    if (offsets.length == 0 || offsets[0] != 0) {
      throw new IllegalArgumentException(
          "offsets of " + offsets.length + " elements, expected [n + 1] starting at 0");
    }
    for (int i = 1; i < offsets.length; i++) {
      if (offsets[i] < offsets[i - 1]) {
        throw new IllegalArgumentException(
            "offset "
                + i
                + " is "
                + offsets[i]
                + ", below offset "
                + (i - 1)
                + " "
                + offsets[i - 1]);
      }
    }
  }

  /** Checks that each field's array holds {@code total tokens * width} elements of its dtype. */
  public RaggedValues checked(List<FieldSpec> fields) {
    if (values.length != fields.size()) {
      throw new IllegalArgumentException(
          values.length + " value arrays, expected one per field of " + fields);
    }
    for (int f = 0; f < values.length; f++) {
      FieldSpec field = fields.get(f);
      long expected = totalTokens() * field.width();
      Object a = values[f];
      if (a == null
          || a.getClass() != field.dtype().newArray(0).getClass()
          || java.lang.reflect.Array.getLength(a) != expected) {
        throw new IllegalArgumentException(
            "values of field '"
                + field.name()
                + "' are not "
                + expected
                + " "
                + field.dtype()
                + " elements");
      }
    }
    return this;
  }

  /** The number of examples. */
  public int size() {
    return offsets.length - 1;
  }

  /** The number of tokens of example {@code i}. */
  public int tokens(int i) {
    return Math.toIntExact(offsets[i + 1] - offsets[i]);
  }

  /** Every example's tokens together. */
  public long totalTokens() {
    return offsets[offsets.length - 1];
  }
}
