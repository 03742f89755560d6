package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.usermodel.UserModel;

/**
 * What each side computes on the same rows, from the rows alone (no model is loaded): real tokens
 * against the padded tokens of TensorCache's passes (the planner's groups packed under the default
 * token budget) and of the bare loop's micro-batches, and the largest logits TRL's batches (data
 * order, padded to the longest) hold, which decide whether a batch size fits in memory.
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
   * The rows of {@code dataset} as the fill prepares them for bench model {@code name}, cut at
   * {@code maxLength}. Close it.
   */
  static Padding of(BenchModel bench, String name, Path dataset, int maxLength) throws IOException {
    Truncation truncation = new Truncation(maxLength, Truncation.Mode.KEEP_START);
    Path dir = bench.path(name, "model_dir");
    int vocab = bench.model(name).path("vocab_size").asInt();
    var user =
        UserModel.open(
            dir, UserModel.Runner.LOGPROB, truncation, DType.F32, BudgetSettings.DEFAULT);
    try {
      return new Padding(
          rows(user.prepare(ExampleSet.load(dataset, DataFormat.TEXT))), truncation, user, vocab);
    } catch (IOException | RuntimeException e) {
      user.close();
      throw e;
    }
  }

  static List<TokenizedPreference> rows(ExampleSet data) {
    return data.examples().stream()
        .map(e -> Example.as(TokenizedPreference.class, e, "byo"))
        .toList();
  }

  TokenBudget budget() {
    return user.budget();
  }

  /** Real tokens, and padded tokens and passes of TensorCache's plan and of the bare loop. */
  Map<String, Object> figures() {
    long real = rows.stream().flatMapToInt(r -> IntStream.of(lengths(r))).asLongStream().sum();
    TokenBudget budget = user.budget();
    long padded = 0;
    long largestBytes = 0;
    int passes = 0;
    for (int[] group : user.planner().groups(rows)) {
      // the sequences of the group and their keys, as the runner packs them
      int[] ls = IntStream.of(group).flatMap(i -> IntStream.of(lengths(rows.get(i)))).toArray();
      long[] ks = new long[ls.length];
      int k = 0;
      for (int i : group) {
        for (int side = 0; side < lengths(rows.get(i)).length; side++) {
          ks[k++] = 2L * rows.get(i).index() + side;
        }
      }
      for (int[] pass : budget.passes(ls, ks)) {
        int steps = TokenBudget.steps(IntStream.of(pass).map(s -> ls[s]).max().orElse(0));
        padded += (long) pass.length * steps;
        largestBytes = Math.max(largestBytes, budget.memory().passBytes(pass.length, steps));
        passes++;
      }
    }
    List<BareLoop.Micro> bare = BareLoop.batches(rows, truncation, 0);
    long barePadded = bare.stream().mapToLong(m -> (long) m.rows() * m.steps()).sum();
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("rows", rows.size());
    f.put("rows_trl_drops", rows.stream().filter(r -> drops(r)).count());
    f.put("real_tokens", real);
    f.put("tensorcache_padded_tokens", padded);
    f.put("tensorcache_padding_factor", Stats.round((double) padded / real, 3));
    f.put("tensorcache_passes", passes);
    f.put("tensorcache_largest_pass_estimate_mib", ProcMemory.mib(largestBytes));
    f.put("tensorcache_budget", budget.describe());
    f.put("bare_loop_padded_tokens", barePadded);
    f.put("bare_loop_padding_factor", Stats.round((double) barePadded / real, 3));
    f.put("bare_loop_micro_batches", bare.size());
    return f;
  }

  /**
   * Bytes TRL is expected to hold at {@code batch} rows on the first {@code limit} rows: the
   * largest {@code [2B, longest, vocab]} float32 logits over its batches in data order (the rows it
   * drops left out), a fourth of that for their log-sum-exp, and {@code weights}.
   */
  long trlBytes(int batch, int limit, long weights) {
    long logits = largestLogitsBytes(batch, limit);
    return logits + logits / 4 + weights;
  }

  /** Bytes the bare loop is expected to hold: a micro-batch's logits, two chunks of log-softmax. */
  long bareBytes(long weights) {
    return largestLogitsBytes(ByoSize.BARE_MICRO_BATCH, rows.size()) + (512L << 20) + weights;
  }

  private long largestLogitsBytes(int batch, int limit) {
    List<TokenizedPreference> kept =
        rows.subList(0, Math.min(limit, rows.size())).stream().filter(r -> !drops(r)).toList();
    long largest = 0;
    for (int[] b : BatchPlanner.fixed(batch).groups(kept)) {
      int longest =
          IntStream.of(b).flatMap(i -> IntStream.of(lengths(kept.get(i)))).max().orElse(0);
      largest = Math.max(largest, 2L * b.length * longest * vocab * 4L);
    }
    return largest;
  }

  /** The token count of each sequence of {@code r} that is computed. */
  private int[] lengths(TokenizedPreference r) {
    return CausalLmLogprobRunner.sequenceLengths(r, truncation);
  }

  /** Whether TRL drops the row (its prompt fills the length); the fill keeps it, 0 tokens. */
  private boolean drops(TokenizedPreference r) {
    return truncation.dropsPrompt(r.promptIds().length);
  }

  @Override
  public void close() {
    user.close();
  }
}
