package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.PaddedBatch;
import org.tensorcache.model.usermodel.UserModel;

/**
 * What each side computes on the same rows, from the rows alone (no model is loaded): real tokens
 * against padded tokens of TensorCache's passes (the planner's groups packed under the token
 * budget), of the bare loop's fixed micro-batches, and of TRL's batches (data order, padded to the
 * longest), with the largest TRL batch's logits, which decide whether a batch size fits in memory.
 */
final class Padding implements AutoCloseable {
  private final List<TokenizedPreference> rows;
  private final Truncation truncation;
  private final UserModel user;
  private final int vocab;

  private Padding(
      List<TokenizedPreference> rows, Truncation truncation, UserModel user, int vocab) {
    this.rows = rows;
    this.truncation = truncation;
    this.user = user;
    this.vocab = vocab;
  }

  /**
   * The rows of {@code dataset} prepared as the fill prepares them for {@code modelDir}, with
   * {@code settings}; {@code vocab} is the model's vocabulary. Close the result.
   */
  static Padding of(Path modelDir, Path dataset, int maxLength, BudgetSettings settings, int vocab)
      throws IOException {
    Truncation truncation = new Truncation(maxLength, Truncation.Mode.KEEP_START);
    UserModel user =
        UserModel.open(modelDir, UserModel.Runner.LOGPROB, truncation, DType.F32, settings);
    try {
      List<TokenizedPreference> rows = new ArrayList<>();
      for (Example e : user.prepare(ExampleSet.load(dataset, DataFormat.TEXT)).examples()) {
        rows.add(Example.as(TokenizedPreference.class, e, "byo"));
      }
      return new Padding(rows, truncation, user, vocab);
    } catch (IOException | RuntimeException e) {
      user.close();
      throw e;
    }
  }

  /** The token budget the fill packs under, as it prints it. */
  TokenBudget budget() {
    return user.budget();
  }

  /** Rows TRL drops (a prompt that fills the length), kept by the fill with 0 tokens. */
  long droppedRows() {
    return rows.stream().filter(r -> truncation.dropsPrompt(r.promptIds().length)).count();
  }

  /** Real tokens, and padded tokens and passes of TensorCache's plan and of the bare loop. */
  Map<String, Object> figures() {
    long real = 0;
    for (TokenizedPreference r : rows) {
      for (int length : CausalLmLogprobRunner.sequenceLengths(r, truncation)) {
        real += length;
      }
    }
    TokenBudget budget = user.budget();
    long padded = 0;
    long largestBytes = 0;
    int passes = 0;
    for (int[] group : user.planner().groups(rows)) {
      List<Integer> lengths = new ArrayList<>();
      List<Long> keys = new ArrayList<>();
      for (int i : group) {
        int[] l = CausalLmLogprobRunner.sequenceLengths(rows.get(i), truncation);
        for (int side = 0; side < l.length; side++) {
          lengths.add(l[side]);
          keys.add(2L * rows.get(i).index() + side);
        }
      }
      int[] ls = lengths.stream().mapToInt(Integer::intValue).toArray();
      long[] ks = keys.stream().mapToLong(Long::longValue).toArray();
      for (int[] pass : budget.passes(ls, ks)) {
        int longest = 0;
        for (int s : pass) {
          longest = Math.max(longest, ls[s]);
        }
        int steps = TokenBudget.steps(longest);
        padded += (long) pass.length * steps;
        largestBytes = Math.max(largestBytes, budget.memory().passBytes(pass.length, steps));
        passes++;
      }
    }
    long barePadded = 0;
    int bareBatches = 0;
    int micro = ByoSize.BARE_MICRO_BATCH;
    for (int from = 0; from < rows.size(); from += micro) {
      int longest = 0;
      int n = 0;
      for (TokenizedPreference r : rows.subList(from, Math.min(rows.size(), from + micro))) {
        for (int length : CausalLmLogprobRunner.sequenceLengths(r, truncation)) {
          longest = Math.max(longest, length);
          n++;
        }
      }
      int m = PaddedBatch.STEP_MULTIPLE;
      barePadded += (long) n * ((Math.max(1, longest) + m - 1) / m * m);
      bareBatches++;
    }
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("rows", rows.size());
    f.put("rows_trl_drops", droppedRows());
    f.put("real_tokens", real);
    f.put("tensorcache_padded_tokens", padded);
    f.put("tensorcache_padding_factor", round3((double) padded / real));
    f.put("tensorcache_passes", passes);
    f.put("tensorcache_largest_pass_estimate_mib", ProcMemory.mib(largestBytes));
    f.put("tensorcache_budget", budget.describe());
    f.put("bare_loop_padded_tokens", barePadded);
    f.put("bare_loop_padding_factor", round3((double) barePadded / real));
    f.put("bare_loop_micro_batches", bareBatches);
    return f;
  }

  /**
   * Bytes of the largest {@code [2B, longest, vocab]} float32 logits over the batches of {@code
   * batch} rows in data order (TRL's dropped rows left out), the first {@code limit} rows only:
   * what TRL holds at once, and the bare loop likewise.
   */
  long largestLogitsBytes(int batch, int limit) {
    List<int[]> kept = new ArrayList<>();
    for (TokenizedPreference r : rows.subList(0, Math.min(limit, rows.size()))) {
      if (!truncation.dropsPrompt(r.promptIds().length)) {
        kept.add(CausalLmLogprobRunner.sequenceLengths(r, truncation));
      }
    }
    long largest = 0;
    for (int from = 0; from < kept.size(); from += batch) {
      int longest = 0;
      int sequences = 0;
      for (int[] lengths : kept.subList(from, Math.min(kept.size(), from + batch))) {
        for (int l : lengths) {
          longest = Math.max(longest, l);
        }
        sequences += 2;
      }
      largest = Math.max(largest, (long) sequences * longest * vocab * 4L);
    }
    return largest;
  }

  /** Closes the tokenizer. */
  @Override
  public void close() {
    user.close();
  }

  private static double round3(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
