package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.model.batch.TokenBudget;

/**
 * Everything measured on one model: TRL's batch-size sweep, the rounds of the four sides, the
 * token-budget sweep of the fill, the padding on the same rows and the values' agreement with TRL.
 */
final class ModelRun {
  /** The sides of a round, in the order each round runs them. */
  static final List<String> SIDES = List.of("tensorcache", "trl_default", "trl_best", "bare_loop");

  final String name;
  final String description;
  final Map<String, Object> padding;
  final Map<Integer, Measurement> trlSweep = new LinkedHashMap<>();
  final List<Map<String, Measurement>> rounds = new ArrayList<>();
  final Map<Integer, Measurement> budgetSweep = new LinkedHashMap<>();
  final Map<String, Object> values = new LinkedHashMap<>();
  int sweepRows;
  int bestBatch = -1;

  ModelRun(String name, String description, Map<String, Object> padding) {
    this.name = name;
    this.description = description;
    this.padding = padding;
  }

  /**
   * Measures model {@code name}: a sweep of TRL's batch size on the first rows picks its best, then
   * each round runs (a) the fill, (b) TRL at batch 8 and at its best batch, (c) the bare loop, so
   * that a shared machine's drift falls on all alike; then the values and the token-budget sweep.
   */
  static ModelRun measure(BenchModel bench, String name, ByoSize size, Runs runs)
      throws IOException, InterruptedException {
    ByoSize.Rows rows = size.models().get(name);
    runs.model(name, rows.warmupRows());
    Path data = bench.rows("dataset", rows.rows());
    int sweepRows = Math.min(rows.rows(), rows.sweepRows());
    Path hf = bench.path(name, "hf_dir");
    Path model = bench.path(name, "model_dir");
    long weights = bench.model(name).path("parameters").asLong() * 4L;
    int vocab = bench.model(name).path("vocab_size").asInt();
    int def = ByoSize.TRL_DEFAULT_BATCH;
    Path tcValues = runs.file(name + "-tensorcache-values.json");
    Path bareValues = runs.file(name + "-bare-values.json");
    try (Padding padding = Padding.of(model, data, ByoSize.MAX_LENGTH, vocab)) {
      ModelRun m = new ModelRun(name, bench.describe(name), padding.figures());
      System.out.printf("== %s; %d rows ==%n", m.description, rows.rows());
      m.sweepRows = sweepRows;
      for (int b : size.trlBatches()) {
        if (m.trlSweep.keySet().stream().anyMatch(earlier -> earlier >= sweepRows)) {
          continue; // one batch of every row already: a larger batch is the same computation
        }
        Path values = rows.sweepIsFirstRound() ? trlValues(runs, name, b) : null;
        long bytes = padding.trlBytes(b, sweepRows, weights);
        Measurement x = runs.trl(hf, bench.rows("dataset", sweepRows), b, values, bytes);
        m.trlSweep.put(b, x);
        ByoBench.print(name, "TRL sweep, batch " + b + ", first " + sweepRows + " rows", x);
      }
      int best = m.pickBest();
      System.out.printf(
          "%s: TRL's best batch size in the sweep: %s%n", name, best < 0 ? "-" : best);
      for (int r = 0; r < size.rounds(); r++) {
        boolean first = r == 0;
        boolean reuse = first && rows.sweepIsFirstRound();
        Map<String, Measurement> round = new LinkedHashMap<>();
        m.rounds.add(round);
        String at = ", round " + (r + 1) + "/" + size.rounds();
        Measurement tc = runs.fill(model, data, ByoSize.MAX_LENGTH, 0, first ? tcValues : null);
        m.put(round, "tensorcache", "(a) TensorCache fill" + at, tc);
        Map<Integer, Measurement> batches = new LinkedHashMap<>();
        for (int b : best == def || best < 0 ? List.of(def) : List.of(def, best)) {
          Path v = first ? trlValues(runs, name, b) : null;
          batches.put(
              b,
              reuse && m.trlSweep.containsKey(b)
                  ? m.trlSweep.get(b)
                  : runs.trl(hf, data, b, v, padding.trlBytes(b, rows.rows(), weights)));
        }
        m.put(round, "trl_default", "(b) TRL batch " + def + at, batches.get(def));
        Measurement b =
            best < 0 ? Measurement.missing("no batch size of the sweep ran") : batches.get(best);
        String same = best == def ? " (same runs)" : "";
        m.put(round, "trl_best", "(b) TRL best batch " + best + same + at, b);
        Path logits = bench.path(name, "model_logits_dir");
        Path v = first ? bareValues : null;
        Measurement bare = runs.bare(logits, data, v, padding.bareBytes(weights));
        m.put(round, "bare_loop", "(c) bare DJL loop, format 1, 8 rows" + at, bare);
      }
      Path reference = trlValues(runs, name, def);
      if (!Files.isRegularFile(reference) && best > 0) {
        reference = trlValues(runs, name, best);
      }
      m.values.put("trl_values", reference.getFileName().toString());
      m.values.put("tensorcache_vs_trl", Agreement.check(tcValues, reference));
      m.values.put("bare_loop_vs_trl", Agreement.check(bareValues, reference));
      System.out.printf("%s: values against TRL's: %s%n", name, m.values);
      for (int tokens : size.budgets()) {
        // a smoke run, whose figures mean nothing, takes the first round's fill for the default
        boolean reused = size.size() == RunSize.SMOKE && tokens == TokenBudget.DEFAULT_BATCH_TOKENS;
        Measurement x =
            reused
                ? m.rounds.get(0).get("tensorcache")
                : runs.fill(model, data, ByoSize.MAX_LENGTH, tokens, null);
        m.budgetSweep.put(tokens, x);
        ByoBench.print(name, "(a) TensorCache fill, --batch-tokens " + tokens, x);
      }
      return m;
    }
  }

  private void put(Map<String, Measurement> round, String side, String what, Measurement x) {
    round.put(side, x);
    ByoBench.print(name, what, x);
  }

  private static Path trlValues(Runs runs, String model, int batch) {
    return runs.file(model + "-trl-b" + batch + "-values.json");
  }

  /** The sweep's fastest batch size, or -1 when none ran. */
  int pickBest() {
    bestBatch = fastest(trlSweep);
    return bestBatch;
  }

  /** The key of the fastest measurement in {@code xs}, or -1. */
  static int fastest(Map<Integer, Measurement> xs) {
    int best = -1;
    for (var e : xs.entrySet()) {
      double rate = e.getValue().get("examples_per_s");
      if (e.getValue().ok() && (best < 0 || rate > xs.get(best).get("examples_per_s"))) {
        best = e.getKey();
      }
    }
    return best;
  }

  /** The rounds' measurements of {@code side} that were taken. */
  private List<Measurement> measured(String side) {
    return rounds.stream().map(r -> r.get(side)).filter(x -> x != null && x.ok()).toList();
  }

  /** The median of figure {@code key} over {@link #measured}, or NaN. */
  double median(String side, String key) {
    return Stats.median(measured(side).stream().mapToDouble(x -> x.get(key)).toArray());
  }

  double rate(String side) {
    return median(side, "examples_per_s");
  }

  /** Median peak resident MiB. */
  double peak(String side) {
    return median(side, "peak_rss_mib");
  }

  /** Why {@code side} has no figure: the first round's reason, or null when it has one. */
  String missing(String side) {
    if (!Double.isNaN(rate(side))) {
      return null;
    }
    return rounds.stream()
        .map(r -> r.get(side))
        .filter(x -> x != null && !x.ok())
        .map(Measurement::why)
        .findFirst()
        .orElse("not measured");
  }

  /** The median examples/s of the fill over that of {@code side}, or null. */
  Double ratio(String side) {
    double r = rate("tensorcache") / rate(side);
    return Double.isFinite(r) ? Stats.round(r, 3) : null;
  }

  /** Everything, as the results file holds it. */
  Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("description", description);
    Map<String, Object> sweep = new LinkedHashMap<>();
    sweep.put("rows", sweepRows);
    trlSweep.forEach((b, x) -> sweep.put("batch_" + b, x.toMap()));
    sweep.put("best_batch", bestBatch);
    m.put("trl_batch_sweep", sweep);
    List<Map<String, Object>> rs = new ArrayList<>();
    for (int i = 0; i < rounds.size(); i++) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("round", i + 1);
      rounds.get(i).forEach((side, x) -> r.put(side, x.toMap()));
      rs.add(r);
    }
    m.put("rounds", rs);
    Map<String, Object> medians = new LinkedHashMap<>();
    Map<String, Object> ratios = new LinkedHashMap<>();
    for (String side : SIDES) {
      Map<String, Object> s = new LinkedHashMap<>();
      if (missing(side) != null) {
        s.put("left_out", missing(side));
      } else {
        s.put("examples_per_s", Stats.round(rate(side), 3));
        for (String key : List.of("peak_rss_mib", "rss_before_timed_mib", "rss_after_load_mib")) {
          double v = median(side, key);
          if (Double.isFinite(v)) {
            s.put(key, Math.round(v));
          }
        }
        s.put(
            "per_round_examples_per_s",
            measured(side).stream().map(x -> Stats.round(x.get("examples_per_s"), 3)).toList());
      }
      if (side.equals("trl_best")) {
        s.put("batch", bestBatch);
      }
      medians.put(side, s);
      if (!side.equals("tensorcache")) {
        ratios.put("tensorcache_vs_" + side, ratio(side));
      }
    }
    m.put("medians", medians);
    m.put("ratios", ratios);
    Map<String, Object> budgets = new LinkedHashMap<>();
    budgetSweep.forEach((t, x) -> budgets.put(Integer.toString(t), x.toMap()));
    budgets.put("best_batch_tokens", fastest(budgetSweep));
    m.put("token_budget_sweep", budgets);
    m.put("padding", padding);
    m.put("values", values);
    return m;
  }
}
