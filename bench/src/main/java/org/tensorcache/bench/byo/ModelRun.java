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
    Path hf = bench.path(name, "hf_dir");
    Path model = bench.path(name, "model_dir");
    long weights = bench.model(name).path("parameters").asLong() * 4L;
    int def = ByoSize.TRL_DEFAULT_BATCH;
    Path tcValues = runs.file(name + "-tensorcache-values.json");
    Path bareValues = runs.file(name + "-bare-values.json");
    try (Padding padding = Padding.of(bench, name, data, ByoSize.MAX_LENGTH)) {
      ModelRun m = new ModelRun(name, bench.describe(name), padding.figures());
      System.out.printf("== %s; %d rows ==%n", m.description, rows.rows());
      int sweepRows = rows.sweep();
      m.sweepRows = sweepRows;
      for (int b : size.trlBatches()) {
        if (m.trlSweep.keySet().stream().anyMatch(earlier -> earlier >= sweepRows)) {
          continue; // one batch of every row already: a larger batch is the same computation
        }
        Path values = rows.sweepIsFirstRound() ? trlValues(runs, name, b) : null;
        long bytes = padding.trlBytes(b, sweepRows, weights);
        m.trlSweep.put(
            b,
            runs.trl(hf, bench.rows("dataset", sweepRows), b, values, bytes)
                .print(name, "TRL sweep, batch " + b + ", first " + sweepRows + " rows"));
      }
      int best = m.bestBatch();
      System.out.printf(
          "%s: TRL's best batch size in the sweep: %s%n", name, best < 0 ? "-" : best);
      for (int r = 0; r < size.rounds(); r++) {
        boolean first = r == 0;
        Map<String, Measurement> round = new LinkedHashMap<>();
        m.rounds.add(round);
        String at = ", round " + (r + 1) + "/" + size.rounds();
        Measurement tc = runs.fill(model, data, ByoSize.MAX_LENGTH, 0, first ? tcValues : null);
        round.put("tensorcache", tc.print(name, "(a) TensorCache fill" + at));
        Map<Integer, Measurement> trl = new LinkedHashMap<>();
        for (int b : best == def || best < 0 ? List.of(def) : List.of(def, best)) {
          boolean reuse = first && rows.sweepIsFirstRound() && m.trlSweep.containsKey(b);
          Path v = first ? trlValues(runs, name, b) : null;
          long bytes = padding.trlBytes(b, rows.rows(), weights);
          trl.put(b, reuse ? m.trlSweep.get(b) : runs.trl(hf, data, b, v, bytes));
        }
        round.put("trl_default", trl.get(def).print(name, "(b) TRL batch " + def + at));
        Measurement b =
            best < 0 ? Measurement.missing("no batch size of the sweep ran") : trl.get(best);
        String same = best == def ? " (same runs)" : "";
        round.put("trl_best", b.print(name, "(b) TRL best batch " + best + same + at));
        Path logits = bench.path(name, "model_logits_dir");
        Measurement bare =
            runs.bare(logits, data, first ? bareValues : null, padding.bareBytes(weights));
        round.put("bare_loop", bare.print(name, "(c) bare DJL loop, format 1, 8 rows" + at));
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
        m.budgetSweep.put(tokens, x.print(name, "(a) TensorCache fill, --batch-tokens " + tokens));
      }
      return m;
    }
  }

  private static Path trlValues(Runs runs, String model, int batch) {
    return runs.file(model + "-trl-b" + batch + "-values.json");
  }

  /** The sweep's fastest batch size, or -1 when none ran. */
  int bestBatch() {
    return fastest(trlSweep);
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
    Map<String, Object> sweep = new LinkedHashMap<>(Map.of("rows", sweepRows));
    trlSweep.forEach((b, x) -> sweep.put("batch_" + b, x.toMap()));
    sweep.put("best_batch", bestBatch());
    List<Map<String, Object>> rs = new ArrayList<>();
    for (Map<String, Measurement> round : rounds) {
      Map<String, Object> r = new LinkedHashMap<>(Map.of("round", rs.size() + 1));
      round.forEach((side, x) -> r.put(side, x.toMap()));
      rs.add(r);
    }
    Map<String, Object> medians = new LinkedHashMap<>();
    Map<String, Object> ratios = new LinkedHashMap<>();
    for (String side : SIDES) {
      medians.put(side, medians(side));
      if (!side.equals("tensorcache")) {
        ratios.put("tensorcache_vs_" + side, ratio(side));
      }
    }
    Map<String, Object> budgets = new LinkedHashMap<>();
    budgetSweep.forEach((t, x) -> budgets.put(Integer.toString(t), x.toMap()));
    budgets.put("best_batch_tokens", fastest(budgetSweep));
    Map<String, Object> m = new LinkedHashMap<>(Map.of("description", description));
    m.put("trl_batch_sweep", sweep);
    m.put("rounds", rs);
    m.put("medians", medians);
    m.put("ratios", ratios);
    m.put("token_budget_sweep", budgets);
    m.put("padding", padding);
    m.put("values", values);
    return m;
  }

  private Map<String, Object> medians(String side) {
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
      s.put("batch", bestBatch());
    }
    return s;
  }
}
