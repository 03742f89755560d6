package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.PaddedBatch;

/**
 * Tokenized preference rows laid out as {@code CausalLmLogprobRunner} lays them out: per
 * micro-batch, the chosen sequences then the rejected ones (prompt + completion cut by the
 * truncation), those with no counted token left out, right-padded to a multiple of {@link
 * PaddedBatch#STEP_MULTIPLE} positions, with next-token targets and the mask of counted tokens.
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
      int steps) {}

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

  /**
   * Writes the cut sequences for {@code scripts/bench_eager.py}: one line per row, {@code
   * {"chosen": [ids], "chosen_start": k, "rejected": [ids], "rejected_start": k}}.
   */
  static void writeSequences(List<TokenizedPreference> rows, Truncation truncation, Path file)
      throws IOException {
    ObjectMapper json = new ObjectMapper();
    Files.createDirectories(file.toAbsolutePath().getParent());
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      for (TokenizedPreference row : rows) {
        Truncation.Sequence c = truncation.cut(row.promptIds(), row.chosenIds());
        Truncation.Sequence r = truncation.cut(row.promptIds(), row.rejectedIds());
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("chosen", c.ids());
        line.put("chosen_start", c.completionStart());
        line.put("rejected", r.ids());
        line.put("rejected_start", r.completionStart());
        w.write(json.writeValueAsString(line));
        w.newLine();
      }
    }
  }
}
