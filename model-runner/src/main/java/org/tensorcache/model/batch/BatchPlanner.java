package org.tensorcache.model.batch;

import java.util.List;
import org.tensorcache.model.data.Example;

/**
 * Splits a range's rows into the groups that are computed together. The groups are a pure function
 * of the rows and the planner's settings: whichever node, request or retry computes a group, it
 * computes the same group, so its values are the same bits.
 */
public interface BatchPlanner {
  /**
   * The groups of {@code rows}, as positions in {@code rows}: every position in exactly one group,
   * ascending within a group.
   */
  List<int[]> groups(List<? extends Example> rows);

  /** The settings, for logs and reports (e.g. {@code 64 rows}). */
  String describe();

  /** Consecutive groups of {@code rows} rows (the last may be shorter). */
  static BatchPlanner fixed(int rows) {
    return new FixedBatches(rows);
  }
}
