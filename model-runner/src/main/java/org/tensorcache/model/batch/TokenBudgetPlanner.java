package org.tensorcache.model.batch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import org.tensorcache.model.data.Example;

/**
 * Groups a range's rows by length: rows ordered by their longest sequence (ties by index) and cut
 * into groups of about {@link #GROUP_PASSES} forward passes' worth of real tokens, whose sequences
 * the runner packs, sorted, under the {@link TokenBudget}. A group is the unit of computation: a
 * lookup of a missing row waits for its group, and a group of similar lengths pads little.
 */
public final class TokenBudgetPlanner implements BatchPlanner {
  /**
   * Forward passes' worth of tokens per group. Larger groups pad less (rows of one group sort among
   * each other only) but make a lookup of a missing row wait longer.
   */
  public static final int GROUP_PASSES = 8;

  private final TokenBudget budget;
  private final Function<Example, int[]> lengths;

  /**
   * Plans with {@code budget}; {@code lengths} gives the token count of each sequence a row is
   * computed with (empty when it needs no forward pass).
   */
  public TokenBudgetPlanner(TokenBudget budget, Function<Example, int[]> lengths) {
    this.budget = budget;
    this.lengths = lengths;
  }

  @Override
  public List<int[]> groups(List<? extends Example> rows) {
    int n = rows.size();
    int[] longest = new int[n];
    int[] tokens = new int[n];
    long[] index = new long[n];
    for (int i = 0; i < n; i++) {
      for (int length : lengths.apply(rows.get(i))) {
        longest[i] = Math.max(longest[i], length);
        tokens[i] += length;
      }
      index[i] = rows.get(i).index();
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(
        order, Comparator.<Integer>comparingInt(i -> longest[i]).thenComparingLong(i -> index[i]));
    long limit = (long) GROUP_PASSES * budget.batchTokens();
    List<int[]> groups = new ArrayList<>();
    List<Integer> current = new ArrayList<>();
    long sum = 0;
    for (int i : order) {
      if (!current.isEmpty() && sum + tokens[i] > limit) {
        groups.add(sorted(current));
        current.clear();
        sum = 0;
      }
      current.add(i);
      sum += tokens[i];
    }
    if (!current.isEmpty()) {
      groups.add(sorted(current));
    }
    return groups;
  }

  private static int[] sorted(List<Integer> positions) {
    int[] out = positions.stream().mapToInt(Integer::intValue).toArray();
    Arrays.sort(out);
    return out;
  }

  /** The budget the runner packs each group's sequences under. */
  public TokenBudget budget() {
    return budget;
  }

  @Override
  public String describe() {
    return budget.describe();
  }
}
