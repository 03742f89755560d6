package org.tensorcache.cli;

import java.util.List;
import org.tensorcache.model.data.Example;

/**
 * What {@link LocalFill} needs of one kind of cache: a range's values before anything is computed,
 * which of its examples are present, and how a batch is computed into them. {@link BlockRanges} for
 * caches of fixed-shape fields, {@link RowRanges} for per-token ones.
 *
 * @param <V> one range's values
 */
interface LocalRanges<V> extends AutoCloseable {
  /** Range {@code range} with no example present. */
  V empty(int range);

  /** The first example of the range {@code values} hold. */
  long start(V values);

  /** The examples of that range. */
  int length(V values);

  /** The examples present. */
  int presentCount(V values);

  /** Whether example {@code index} is present. */
  boolean isPresent(V values, long index);

  /** Computes {@code batch} and puts the examples of it not present yet into {@code values}. */
  void compute(List<Example> batch, V values);

  /** Releases the runner. */
  @Override
  void close();
}
