package org.tensorcache.model.runner;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.hf.Truncation;

/**
 * Token-id sequences padded on the right to one length, with their attention mask, as a traced
 * Hugging Face model takes them ({@code int64 [rows, steps]}). Lengths are rounded up to a multiple
 * of {@link TokenBudget#STEP_MULTIPLE}, as the budget counts them, so that the kernels see few
 * shapes; right padding leaves the values at real positions of a causal model unchanged.
 */
record TokenRows(long[] ids, long[] mask, int rows, int steps) {

  /** The token ids of {@code sequences}, padded. */
  static TokenRows ofSequences(List<Truncation.Sequence> sequences, int padId) {
    List<int[]> ids = new ArrayList<>(sequences.size());
    sequences.forEach(s -> ids.add(s.ids()));
    return of(ids, padId);
  }

  static TokenRows of(List<int[]> sequences, int padId) {
    int longest = 1;
    for (int[] s : sequences) {
      longest = Math.max(longest, s.length);
    }
    int steps = TokenBudget.steps(longest);
    int rows = sequences.size();
    long[] ids = new long[rows * steps];
    long[] mask = new long[rows * steps];
    Arrays.fill(ids, padId);
    for (int r = 0; r < rows; r++) {
      int[] s = sequences.get(r);
      for (int t = 0; t < s.length; t++) {
        ids[r * steps + t] = s[t];
        mask[r * steps + t] = 1;
      }
    }
    return new TokenRows(ids, mask, rows, steps);
  }
}
