package org.tensorcache.model.batch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Sequences are packed sorted by length, every one exactly once, each pass within the token budget
 * and the memory bound (or alone), the same passes whatever order they are given in.
 */
class TokenBudgetTest {
  private static final MemoryModel TINY =
      new MemoryModel(MemoryModel.Output.SPLIT_HEAD, 64, 4, 128, 800);

  @Property(tries = 200)
  void passesPartitionFitAndDependOnTheSequencesOnly(
      @ForAll @Size(max = 60) List<@IntRange(min = 1, max = 700) Integer> lengths,
      @ForAll @IntRange(min = 8, max = 2048) int batchTokens) {
    TokenBudget budget = new TokenBudget(batchTokens, 1L << 30, TINY);
    int[] l = lengths.stream().mapToInt(Integer::intValue).toArray();
    long[] keys = new long[l.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = 1000 + 7L * i;
    }
    List<int[]> passes = budget.passes(l, keys);
    boolean[] seen = new boolean[l.length];
    int previousLongest = 0;
    for (int[] pass : passes) {
      int longest = 0;
      for (int s : pass) {
        assertTrue(!seen[s], "sequence " + s + " in two passes");
        seen[s] = true;
        assertTrue(l[s] >= longest, "a pass is sorted by length");
        longest = l[s];
      }
      assertTrue(l[pass[0]] >= previousLongest, "passes follow each other by length");
      previousLongest = longest;
      assertTrue(
          pass.length == 1 || budget.fits(pass.length, TokenBudget.steps(longest)),
          "pass of " + pass.length + " x " + longest + " over " + batchTokens);
    }
    for (boolean s : seen) {
      assertTrue(s, "every sequence is computed");
    }
    // the same sequences given in reverse order make the same passes (by key)
    int[] reversed = new int[l.length];
    long[] reversedKeys = new long[l.length];
    for (int i = 0; i < l.length; i++) {
      reversed[i] = l[l.length - 1 - i];
      reversedKeys[i] = keys[l.length - 1 - i];
    }
    assertEquals(keyed(passes, keys), keyed(budget.passes(reversed, reversedKeys), reversedKeys));
  }

  private static List<List<Long>> keyed(List<int[]> passes, long[] keys) {
    List<List<Long>> out = new ArrayList<>();
    for (int[] pass : passes) {
      out.add(Arrays.stream(pass).mapToObj(s -> keys[s]).toList());
    }
    return out;
  }

  @Test
  void aSequenceLongerThanTheBudgetGoesAlone() {
    TokenBudget budget = new TokenBudget(64, 1L << 30, TINY);
    List<int[]> passes = budget.passes(new int[] {10, 100, 12}, new long[] {0, 1, 2});
    assertEquals(2, passes.size());
    assertEquals(List.of(0, 2), Arrays.stream(passes.get(0)).boxed().toList());
    assertEquals(List.of(1), Arrays.stream(passes.get(1)).boxed().toList());
  }

  @Test
  void theMemoryBoundCapsAPassBelowTheTokenBudgetForFullLogitsOfAWideVocabulary() {
    MemoryModel wide = new MemoryModel(MemoryModel.Output.FULL_LOGITS, 64, 4, 128, 151_936);
    TokenBudget budget = new TokenBudget(4096, 512L << 20, wide);
    int[] lengths = new int[64];
    Arrays.fill(lengths, 128);
    long[] keys = new long[64];
    Arrays.setAll(keys, i -> i);
    for (int[] pass : budget.passes(lengths, keys)) {
      assertTrue(wide.passBytes(pass.length, 128) <= 512L << 20);
      // 128 x 151,936 x 4 bytes of logits is 74 MiB a row: 4 rows at most under 512 MiB
      assertTrue(pass.length <= 4, "pass of " + pass.length + " rows");
    }
  }

  @Test
  void theHeadIsChunkedUnderTheBoundAndAtLeastOnePositionAtATime() {
    MemoryModel wide = new MemoryModel(MemoryModel.Output.SPLIT_HEAD, 64, 4, 128, 151_936);
    TokenBudget budget = new TokenBudget(4096, 64L << 20, wide);
    int chunk = budget.headChunk(8, 512, 2000);
    assertTrue(chunk >= 1 && chunk < 2000, "chunk " + chunk);
    assertTrue(2L * 8 * 512 * 64 * 4 + wide.headBytes(chunk) <= 64L << 20);
    assertEquals(1, new TokenBudget(4096, 1L << 20, wide).headChunk(8, 512, 2000));
    assertEquals(10, new TokenBudget(4096, 1L << 30, TINY).headChunk(1, 16, 10));
  }

  @Test
  void sizesParseWithUnitsAndBadOnesAreNamed() {
    assertEquals(2L << 30, BudgetSettings.parseBytes("2g"));
    assertEquals(512L << 20, BudgetSettings.parseBytes("512MiB"));
    assertEquals(1536L << 20, BudgetSettings.parseBytes("1.5G"));
    assertEquals(1000, BudgetSettings.parseBytes("1000"));
    var e = assertThrows(IllegalArgumentException.class, () -> BudgetSettings.parseBytes("lots"));
    assertTrue(e.getMessage().contains("size 'lots' invalid"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> BudgetSettings.parseBytes("-1g"));
    var small =
        assertThrows(IllegalArgumentException.class, () -> new TokenBudget(4, 1L << 30, TINY));
    assertTrue(small.getMessage().contains("batch tokens 4 invalid"), small.getMessage());
  }
}
