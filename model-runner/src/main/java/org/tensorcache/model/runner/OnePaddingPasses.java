package org.tensorcache.model.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.tensorcache.model.batch.TokenBudget;

/** Forward passes whose sequences share one padded length. */
final class OnePaddingPasses {
  private OnePaddingPasses() {}

  /**
   * {@code budget}'s passes of the sequences of {@code lengths} (ties by {@code keys}), each of
   * sequences of one padded length: a model's values at a position change with the padded length of
   * its pass (other attention kernels) but not with the other rows of it, so a row's values are a
   * function of the row alone.
   */
  static List<int[]> of(TokenBudget budget, int[] lengths, long[] keys) {
    TreeMap<Integer, List<Integer>> bySteps = new TreeMap<>();
    for (int i = 0; i < lengths.length; i++) {
      bySteps.computeIfAbsent(TokenBudget.steps(lengths[i]), s -> new ArrayList<>()).add(i);
    }
    List<int[]> out = new ArrayList<>();
    for (List<Integer> members : bySteps.values()) {
      int[] l = new int[members.size()];
      long[] kk = new long[members.size()];
      for (int j = 0; j < l.length; j++) {
        l[j] = lengths[members.get(j)];
        kk[j] = keys[members.get(j)];
      }
      for (int[] pass : budget.passes(l, kk)) {
        int[] mapped = new int[pass.length];
        for (int j = 0; j < pass.length; j++) {
          mapped[j] = members.get(pass[j]);
        }
        out.add(mapped);
      }
    }
    return out;
  }
}
