package org.tensorcache.bench.byo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.tensorcache.bench.report.Stats;

/**
 * Everything measured on one model: TRL's batch-size sweep, the rounds of the four sides, the
 * token-budget sweep of the fill, the padding on the same rows and the values' agreement.
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

  /** The sweep's fastest batch size, or -1 when none ran. */
  int pickBest() {
    double best = -1;
    for (var e : trlSweep.entrySet()) {
      if (e.getValue().ok() && e.getValue().examplesPerS() > best) {
        best = e.getValue().examplesPerS();
        bestBatch = e.getKey();
      }
    }
    return bestBatch;
  }

  /** The median of {@code figure} over the rounds in which {@code side} was measured, or NaN. */
  double median(String side, ToDoubleFunction<Measurement> figure) {
    double[] xs =
        rounds.stream()
            .map(r -> r.get(side))
            .filter(m -> m != null && m.ok())
            .mapToDouble(figure)
            .sorted()
            .toArray();
    if (xs.length == 0) {
      return Double.NaN;
    }
    int h = xs.length / 2;
    return xs.length % 2 == 1 ? xs[h] : (xs[h - 1] + xs[h]) / 2;
  }

  /** Median examples/s of {@code side}. */
  double rate(String side) {
    return median(side, Measurement::examplesPerS);
  }

  /** Median peak resident bytes of {@code side}. */
  double peak(String side) {
    return median(side, m -> m.peakRss());
  }

  /** Why {@code side} has no figure: the first round's reason, or null when it has one. */
  String missing(String side) {
    if (!Double.isNaN(rate(side))) {
      return null;
    }
    return rounds.stream()
        .map(r -> r.get(side))
        .filter(m -> m != null && !m.ok())
        .map(Measurement::why)
        .findFirst()
        .orElse("not measured");
  }

  /** The budget sweep's fastest {@code --batch-tokens}, or -1. */
  int bestBudget() {
    return budgetSweep.entrySet().stream()
        .filter(e -> e.getValue().ok())
        .max((a, b) -> Double.compare(a.getValue().examplesPerS(), b.getValue().examplesPerS()))
        .map(Map.Entry::getKey)
        .orElse(-1);
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
    Map<String, Object> med = new LinkedHashMap<>();
    for (String side : SIDES) {
      Map<String, Object> s = new LinkedHashMap<>();
      String why = missing(side);
      if (why != null) {
        s.put("left_out", why);
      } else {
        s.put("examples_per_s", Stats.round(rate(side), 3));
        s.put("peak_rss_mib", ProcMemory.mib((long) peak(side)));
        s.put(
            "rss_before_timed_mib",
            ProcMemory.mib((long) median(side, Measurement::rssBeforeTimed)));
        double load = median(side, Measurement::rssAfterLoad);
        if (load >= 0) {
          s.put("rss_after_load_mib", ProcMemory.mib((long) load));
        }
        s.put("per_round_examples_per_s", perRound(side));
      }
      if (side.equals("trl_best")) {
        s.put("batch", bestBatch);
      }
      med.put(side, s);
    }
    m.put("medians", med);
    Map<String, Object> ratios = new LinkedHashMap<>();
    ratios.put("tensorcache_vs_trl_default", ratio("trl_default"));
    ratios.put("tensorcache_vs_trl_best", ratio("trl_best"));
    ratios.put("tensorcache_vs_bare_loop", ratio("bare_loop"));
    m.put("ratios", ratios);
    Map<String, Object> budgets = new LinkedHashMap<>();
    budgetSweep.forEach((t, x) -> budgets.put(Integer.toString(t), x.toMap()));
    budgets.put("best_batch_tokens", bestBudget());
    m.put("token_budget_sweep", budgets);
    m.put("padding", padding);
    m.put("values", values);
    return m;
  }

  /** The median examples/s of the fill over that of {@code side}, or null. */
  Double ratio(String side) {
    double r = rate("tensorcache") / rate(side);
    return Double.isFinite(r) ? Stats.round(r, 3) : null;
  }

  private List<Double> perRound(String side) {
    return Arrays.stream(
            rounds.stream()
                .map(r -> r.get(side))
                .filter(x -> x != null && x.ok())
                .mapToDouble(x -> Stats.round(x.examplesPerS(), 3))
                .toArray())
        .boxed()
        .toList();
  }
}
