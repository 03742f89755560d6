package org.tensorcache.model.data;

import java.util.Arrays;

/** A tokenized text row: the ids of the whole text, special tokens included. */
public record TokenizedDocument(long index, int[] ids) implements Example {

  @Override
  public boolean equals(Object o) {
    return o instanceof TokenizedDocument t && t.index == index && Arrays.equals(t.ids, ids);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(index) * 31 + Arrays.hashCode(ids);
  }

  @Override
  public String toString() {
    return "TokenizedDocument[" + index + ", " + ids.length + " ids]";
  }
}
