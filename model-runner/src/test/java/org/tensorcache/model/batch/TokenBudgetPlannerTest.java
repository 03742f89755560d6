package org.tensorcache.model.batch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedDocument;

/**
 * A range's rows are grouped by length into groups of bounded tokens, every row in one group, and
 * the groups (as sets of indices) do not depend on the order the rows are listed in.
 */
class TokenBudgetPlannerTest {
  private static final MemoryModel TINY =
      new MemoryModel(MemoryModel.Output.HIDDEN_STATES, 64, 4, 128, 800);

  @Property(tries = 100)
  void groupsPartitionTheRowsByLengthAndArePureFunctionsOfThem(
      @ForAll @IntRange(min = 0, max = 300) int n,
      @ForAll @IntRange(min = 8, max = 512) int batchTokens,
      @ForAll long seed) {
    Random random = new Random(seed);
    List<Example> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      // log-normal lengths, as real preference data
      int length = (int) Math.max(1, Math.min(900, Math.exp(4.5 + random.nextGaussian() * 0.7)));
      rows.add(new TokenizedDocument(500 + i, new int[length]));
    }
    TokenBudget budget = new TokenBudget(batchTokens, 1L << 30, TINY);
    TokenBudgetPlanner planner =
        new TokenBudgetPlanner(budget, e -> new int[] {((TokenizedDocument) e).ids().length});
    List<int[]> groups = planner.groups(rows);
    boolean[] seen = new boolean[n];
    int previousLongest = 0;
    for (int[] group : groups) {
      long tokens = 0;
      int shortest = Integer.MAX_VALUE;
      int longest = 0;
      for (int i = 0; i < group.length; i++) {
        assertTrue(i == 0 || group[i] > group[i - 1], "positions ascend within a group");
        assertTrue(!seen[group[i]], "row in two groups");
        seen[group[i]] = true;
        int length = ((TokenizedDocument) rows.get(group[i])).ids().length;
        tokens += length;
        shortest = Math.min(shortest, length);
        longest = Math.max(longest, length);
      }
      assertTrue(
          group.length == 1 || tokens <= (long) TokenBudgetPlanner.GROUP_PASSES * batchTokens,
          "group of " + tokens + " tokens");
      assertTrue(shortest >= previousLongest, "groups follow each other by length");
      previousLongest = longest;
    }
    for (boolean s : seen) {
      assertTrue(s);
    }
    List<Example> shuffled = new ArrayList<>(rows);
    Collections.shuffle(shuffled, random);
    assertEquals(indexSets(groups, rows), indexSets(planner.groups(shuffled), shuffled));
  }

  private static List<List<Long>> indexSets(List<int[]> groups, List<Example> rows) {
    List<List<Long>> out = new ArrayList<>();
    for (int[] group : groups) {
      out.add(Arrays.stream(group).mapToObj(i -> rows.get(i).index()).sorted().toList());
    }
    out.sort((a, b) -> Long.compare(a.get(0), b.get(0)));
    return out;
  }
}
