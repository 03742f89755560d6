package org.tensorcache.bench.byo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.PaddedBatch;

/**
 * Tokenized preference rows in fixed micro-batches of rows in data order, as the product computed a
 * user's model before passes were packed by tokens: per micro-batch, the chosen sequences then the
 * rejected ones (prompt + completion cut by the truncation), those with no counted token left out,
 * right-padded to the longest, rounded up to a multiple of {@link PaddedBatch#STEP_MULTIPLE}
 * positions, with next-token targets and the mask of counted tokens.
 */
final class PaddedBatches {
  /** One micro-batch: {@code rows x steps} arrays, and which row holds each sequence (or -1). */
  record Micro(
      int examples,
      List<Truncation.Sequence> sequences,
      int[] slot,
      float[] countedTokens,
      long[] ids,
      long[] mask,
      long[] targets,
      float[] counted,
      int rows,
      int steps) {
    /** Tokens the forward pass computes, padding included. */
    long paddedTokens() {
      return (long) rows * steps;
    }
  }

  private PaddedBatches() {}

  /** The micro-batches of {@code rows}, {@code microBatch} rows each. */
  static List<Micro> of(
      List<TokenizedPreference> rows, Truncation truncation, int padId, int microBatch) {
    List<Micro> out = new ArrayList<>();
    for (int from = 0; from < rows.size(); from += microBatch) {
      out.add(
          micro(rows.subList(from, Math.min(rows.size(), from + microBatch)), truncation, padId));
    }
    return out;
  }

  private static Micro micro(List<TokenizedPreference> micro, Truncation truncation, int padId) {
    int b = micro.size();
    List<Truncation.Sequence> computed = new ArrayList<>(2 * b);
    int[] slot = new int[2 * b];
    float[] tokens = new float[2 * b];
    for (int s = 0; s < 2 * b; s++) {
      TokenizedPreference row = micro.get(s % b);
      Truncation.Sequence seq =
          truncation.cut(row.promptIds(), s < b ? row.chosenIds() : row.rejectedIds());
      tokens[s] = seq.countedTokens();
      slot[s] = seq.countedTokens() > 0 ? computed.size() : -1;
      if (slot[s] >= 0) {
        computed.add(seq);
      }
    }
    int longest = 1;
    for (Truncation.Sequence s : computed) {
      longest = Math.max(longest, s.ids().length);
    }
    int m = PaddedBatch.STEP_MULTIPLE;
    int steps = (longest + m - 1) / m * m;
    int n = computed.size();
    long[] ids = new long[n * steps];
    long[] mask = new long[n * steps];
    long[] targets = new long[n * steps];
    float[] counted = new float[n * steps];
    Arrays.fill(ids, padId);
    for (int r = 0; r < n; r++) {
      Truncation.Sequence s = computed.get(r);
      int first = Math.max(1, s.completionStart());
      for (int t = 0; t < s.ids().length; t++) {
        ids[r * steps + t] = s.ids()[t];
        mask[r * steps + t] = 1;
        if (t + 1 < s.ids().length) {
          targets[r * steps + t] = s.ids()[t + 1];
          counted[r * steps + t] = t + 1 >= first ? 1f : 0f;
        }
      }
    }
    return new Micro(b, computed, slot, tokens, ids, mask, targets, counted, n, steps);
  }
}
