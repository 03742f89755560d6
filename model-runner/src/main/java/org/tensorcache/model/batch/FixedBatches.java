package org.tensorcache.model.batch;

import java.util.ArrayList;
import java.util.List;
import org.tensorcache.model.data.Example;

/** Consecutive groups of a fixed number of rows: the built-in model's micro-batches. */
record FixedBatches(int rows) implements BatchPlanner {
  FixedBatches {
    if (rows < 1) {
      throw new IllegalArgumentException("micro-batch " + rows + " invalid, expected >= 1");
    }
  }

  @Override
  public List<int[]> groups(List<? extends Example> examples) {
    List<int[]> out = new ArrayList<>();
    for (int from = 0; from < examples.size(); from += rows) {
      int[] group = new int[Math.min(rows, examples.size() - from)];
      for (int i = 0; i < group.length; i++) {
        group[i] = from + i;
      }
      out.add(group);
    }
    return out;
  }

  @Override
  public String describe() {
    return rows + " rows";
  }
}
