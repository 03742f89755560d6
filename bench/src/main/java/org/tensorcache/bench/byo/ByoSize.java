package org.tensorcache.bench.byo;

import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;

/**
 * How large a byo run is: the rows compared per model, the bench models made for them, and how many
 * rounds, batch sizes and token budgets are measured. The wide model's rows are fewer: TRL and the
 * bare loop compute its 151,936 logits at every position, several times the small model's time per
 * row.
 *
 * @param size the run's size
 * @param models per model, its rows
 * @param longRows rows of 1,500 to 2,048 tokens in the memory check
 * @param madeRows rows the bench models are made with (a larger run's models serve a smaller one)
 * @param madeLongRows long rows the bench models are made with
 * @param body {@code H,L,NH,KV,I} of the models, or null for the script's (hidden 256, 4 layers)
 * @param tokenizerVocab ids of the trained tokenizer, or 0 for the script's (8,192)
 * @param rounds rounds of TensorCache, TRL at batch 8, TRL at its best batch and the bare loop
 * @param trlBatches TRL's batch sizes the sweep tries
 * @param budgets {@code --batch-tokens} values of the token-budget sweep
 */
record ByoSize(
    RunSize size,
    Map<String, Rows> models,
    int longRows,
    int madeRows,
    int madeLongRows,
    String body,
    int tokenizerVocab,
    int rounds,
    List<Integer> trlBatches,
    List<Integer> budgets) {
  /**
   * The rows of one model.
   *
   * @param rows the first rows of the data set, compared in every round
   * @param sweepRows the first rows TRL's batch-size sweep is timed on
   * @param warmupRows rows each process computes once, untimed, before it is timed
   */
  record Rows(int rows, int sweepRows, int warmupRows) {
    /**
     * Whether the sweep's runs are the first round's TRL runs: when it times the same rows, the
     * same configuration need not run twice.
     */
    boolean sweepIsFirstRound() {
      return sweepRows >= rows;
    }
  }

  /** TRL's default batch ({@code per_device_train_batch_size}, which the precompute takes). */
  static final int TRL_DEFAULT_BATCH = 8;

  /** Rows per micro-batch of the bare loop: what the product ran before the token budget. */
  static final int BARE_MICRO_BATCH = 8;

  /** TRL's default {@code max_length}, and the fill's. */
  static final int MAX_LENGTH = 1024;

  /** The memory check's {@code --max-length}: its rows are longer than TRL's default cut. */
  static final int LONG_MAX_LENGTH = 2048;

  static final long SEED = 20261123;

  /** The sizes of {@code size}. */
  static ByoSize of(RunSize size) {
    List<Integer> batches = List.of(2, 4, 8, 16, 32);
    return switch (size) {
      case FULL ->
          new ByoSize(
              size,
              Map.of("small", new Rows(384, 96, 16), "wide", new Rows(48, 24, 4)),
              8,
              384,
              8,
              null,
              0,
              3,
              batches,
              List.of(1024, 2048, 4096, 8192, 16384));
      case QUICK ->
          new ByoSize(
              size,
              Map.of("small", new Rows(64, 64, 8), "wide", new Rows(16, 16, 2)),
              2,
              384,
              8,
              null,
              0,
              2,
              batches,
              List.of(2048, 4096, 8192));
      case SMOKE ->
          new ByoSize(
              size,
              Map.of("small", new Rows(8, 8, 2), "wide", new Rows(4, 4, 1)),
              1,
              8,
              1,
              "32,2,4,2,64",
              1024,
              1,
              List.of(TRL_DEFAULT_BATCH),
              List.of(org.tensorcache.model.batch.TokenBudget.DEFAULT_BATCH_TOKENS));
    };
  }

  /** The rows of model {@code name}. */
  Rows rows(String name) {
    Rows r = models.get(name);
    if (r == null) {
      throw new IllegalArgumentException("no rows for model '" + name + "', expected " + models);
    }
    return r;
  }

  /**
   * Whether the token-budget sweep takes the first round's fill for the default budget instead of
   * filling again (the smoke run, whose figures mean nothing).
   */
  boolean budgetSweepReusesRound() {
    return size == RunSize.SMOKE;
  }
}
