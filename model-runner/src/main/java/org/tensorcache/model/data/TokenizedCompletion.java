package org.tensorcache.model.data;

import java.util.Arrays;

/**
 * A tokenized language-modeling row {@code {"input_ids", "completion_mask"}}: the ids of the whole
 * sequence and, per id, 1 where the token is trained on (a completion token) and 0 elsewhere, as
 * TRL's SFT data sets carry them (nothing truncated yet).
 */
public record TokenizedCompletion(long index, int[] ids, int[] completionMask) implements Example {
  /** Checks that the mask is as long as the ids and holds only 0 and 1. */
  public TokenizedCompletion {
    if (completionMask.length != ids.length) {
      throw new IllegalArgumentException(
          String.format(
              "row %d has %d completion_mask values for %d input_ids, expected one per id",
              index, completionMask.length, ids.length));
    }
    for (int i = 0; i < completionMask.length; i++) {
      if (completionMask[i] != 0 && completionMask[i] != 1) {
        throw new IllegalArgumentException(
            String.format(
                "row %d completion_mask element %d is %d, expected 0 or 1",
                index, i, completionMask[i]));
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TokenizedCompletion t
        && t.index == index
        && Arrays.equals(t.ids, ids)
        && Arrays.equals(t.completionMask, completionMask);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(index) * 31 + Arrays.hashCode(ids);
  }

  @Override
  public String toString() {
    int counted = 0;
    for (int m : completionMask) {
      counted += m;
    }
    return "TokenizedCompletion[" + index + ", " + ids.length + " ids, " + counted + " completion]";
  }
}
