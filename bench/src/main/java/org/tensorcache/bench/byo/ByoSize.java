package org.tensorcache.bench.byo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.model.batch.TokenBudget;

/**
 * How large a byo run is: per model its rows, the long rows of the memory check, the rounds, TRL's
 * batch sizes the sweep tries and the fill's {@code --batch-tokens} swept. The wide model has fewer
 * rows: TRL and the bare loop compute its 151,936 logits at every position.
 */
record ByoSize(
    RunSize size,
    Map<String, Rows> models,
    int longRows,
    int rounds,
    List<Integer> trlBatches,
    List<Integer> budgets) {
  /**
   * The rows of one model: {@code rows} compared in every round, the first {@code sweepRows} TRL's
   * batch-size sweep is timed on, and {@code warmupRows} each process computes once, untimed.
   */
  record Rows(int rows, int sweepRows, int warmupRows) {
    /** The rows the sweep times: at most {@code rows}. */
    int sweep() {
      return Math.min(rows, sweepRows);
    }

    /** Whether the sweep times the same rows as the rounds, its runs the first round's. */
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

  static ByoSize of(RunSize size) {
    List<Integer> batches = List.of(2, 4, 8, 16, 32);
    int tokens = TokenBudget.DEFAULT_BATCH_TOKENS;
    return switch (size) {
      case FULL ->
          new ByoSize(size, models(384, 96, 16, 48, 24, 4), 8, 3, batches, budgets(1024, 16384));
      case QUICK ->
          new ByoSize(size, models(64, 64, 8, 16, 16, 2), 2, 2, batches, budgets(2048, 8192));
      case SMOKE ->
          new ByoSize(
              size, models(8, 8, 2, 4, 4, 1), 1, 1, List.of(TRL_DEFAULT_BATCH), List.of(tokens));
    };
  }

  /** The {@link Rows} of {@code small}, then of {@code wide}. */
  private static Map<String, Rows> models(int... r) {
    return Map.of("small", new Rows(r[0], r[1], r[2]), "wide", new Rows(r[3], r[4], r[5]));
  }

  /** Every power of two from {@code least} to {@code most}. */
  private static List<Integer> budgets(int least, int most) {
    List<Integer> budgets = new ArrayList<>();
    for (int t = least; t <= most; t *= 2) {
      budgets.add(t);
    }
    return budgets;
  }
}
