package org.tensorcache.model.data;

import java.util.Arrays;

/**
 * A tokenized preference row, TRL's tokenized columns: the prompt's ids and each completion's ids
 * without the prompt's (nothing truncated yet).
 */
public record TokenizedPreference(long index, int[] promptIds, int[] chosenIds, int[] rejectedIds)
    implements Example {

  @Override
  public boolean equals(Object o) {
    return o instanceof TokenizedPreference t
        && t.index == index
        && Arrays.equals(t.promptIds, promptIds)
        && Arrays.equals(t.chosenIds, chosenIds)
        && Arrays.equals(t.rejectedIds, rejectedIds);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(index) * 31 + Arrays.hashCode(chosenIds);
  }

  @Override
  public String toString() {
    return String.format(
        "TokenizedPreference[%d, prompt %d ids, chosen %d ids, rejected %d ids]",
        index, promptIds.length, chosenIds.length, rejectedIds.length);
  }
}
