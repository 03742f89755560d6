package org.tensorcache.store.block;

/**
 * What every kind of one range's values shares, whatever the values are ({@link Block} of
 * fixed-shape fields, or {@code RowBlock} of per-token ones): which range, and which of its
 * examples are present. What the replicas and the manifest need to know of a range.
 */
public interface RangeData {
  /** The range. */
  int range();

  /** The range's number of examples. */
  int length();

  /** Examples present. */
  int presentCount();

  /** Whether every example of the range is present. */
  boolean isComplete();

  /** The presence bitset: bit {@code i % 64} of word {@code i / 64} for the range's example i. */
  long[] presenceWords();
}
