package org.tensorcache.bench.tiers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;
import org.tensorcache.bench.tiers.TrainerLoop.Hits;
import org.tensorcache.bench.tiers.TrainerLoop.Loops;
import org.tensorcache.bench.tiers.TrainerLoop.Result;

/**
 * The figures of the tiers part. {@code fills}: several per node (a fill takes a second or two
 * here, and single fills of the same node differed by up to 2x from one run to the next) with the
 * budget, without, with it again. {@code passes} made every range hot; {@code lookupInto} and
 * {@code array}: the in-memory session's batches without it and from the plain array.
 */
public record TiersReport(
    TierConfig config,
    List<List<EmbeddedNodes.Fill>> fills,
    Loops prefetch,
    Loops noPrefetch,
    Loops inMemory,
    int passes,
    Timings lookupInto,
    Timings array,
    Gathers.Random random) {
  /** A trainer's step with prefetch may take at most this many times the all-in-memory step. */
  static final double PREFETCH_P50_TARGET = 1.5;

  /** Share of a prefetching trainer's values after its first step that must be hot. */
  static final double HOT_SHARE_TARGET = 0.99;

  /** The fill with the budget next to the fill without it. */
  static final double FILL_RATIO_TARGET = 0.95;

  /** Prints the table and a line per target; returns the sections of the results file. */
  public Map<String, Object> report() {
    double[] rate = new double[3];
    double[] cpuUs = new double[3];
    Map<String, Object> fill = new LinkedHashMap<>();
    for (int i = 0; i < 3; i++) {
      rate[i] = median(i, f -> config.examples() / f.seconds());
      cpuUs[i] = median(i, f -> f.cpuSeconds() * 1e6 / config.examples());
      Map<String, Object> node = new LinkedHashMap<>();
      node.put(
          "examples_per_s",
          fills.get(i).stream().map(f -> Math.round(config.examples() / f.seconds())).toList());
      node.put("median_examples_per_s", Math.round(rate[i]));
      node.put("median_cpu_us_per_example", Math.round(cpuUs[i]));
      fill.put(List.of("with_budget_before", "without_budget", "with_budget_after").get(i), node);
    }
    double fillRatio = (rate[0] + rate[2]) / 2 / rate[1]; // the mean of both nodes with the budget
    fill.put("ratio_with_without", Stats.round2(fillRatio));
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("fill", fill);
    m.put("trainer_prefetch", prefetch);
    m.put("trainer_no_prefetch", noPrefetch);
    Map<String, Object> all = new LinkedHashMap<>();
    all.put("session_next", inMemory.sessionNext());
    all.put("data_path", inMemory.dataPath());
    all.put("passes_to_all_hot", passes);
    all.put("lookup_into_same_batches", lookupInto);
    m.put("trainer_in_memory", all);
    m.put("plain_array_same_batches", array);
    m.put("random_lookups", random);
    m.put("table", table().print());

    System.out.printf(
        "fill examples/s (median of %d per node): budget %.0f (before), no budget %.0f, budget"
            + " %.0f (after): ratio %.2f (target >= %.2f): target %s; CPU us per example %.0f /"
            + " %.0f / %.0f%n",
        fills.get(0).size(),
        rate[0],
        rate[1],
        rate[2],
        fillRatio,
        FILL_RATIO_TARGET,
        met(fillRatio >= FILL_RATIO_TARGET),
        cpuUs[0],
        cpuUs[1],
        cpuUs[2]);
    double next = ratio(Loops::sessionNext);
    double path = ratio(Loops::dataPath);
    System.out.printf(
        "trainer with prefetch p50 / all in memory p50: session next() %.2f, data path %.2f"
            + " (target <= %.1f): target %s for next(), %s for the data path%n",
        next,
        path,
        PREFETCH_P50_TARGET,
        met(next <= PREFETCH_P50_TARGET),
        met(path <= PREFETCH_P50_TARGET));
    Result s = prefetch.sessionNext();
    double hot = s.hitsAfterFirstStep().hotShare();
    System.out.printf(
        "hot hits after the first step %.2f%% (target >= %.0f%%): target %s; mean prefetch lead"
            + " %.1f steps; peak held %.2f MiB of a %.2f MiB budget%n",
        hot * 100,
        HOT_SHARE_TARGET * 100,
        met(hot >= HOT_SHARE_TARGET),
        s.meanPrefetchLeadSteps(),
        s.peakBytesHeld() / 1048576.0,
        s.budgetBytes() / 1048576.0);
    Map<String, Object> targets = new LinkedHashMap<>();
    targets.put("prefetch_p50_over_in_memory_next", Stats.round2(next));
    targets.put("prefetch_p50_over_in_memory_data_path", Stats.round2(path));
    targets.put("prefetch_p50_target", PREFETCH_P50_TARGET);
    targets.put("hot_share_after_first_step", hot);
    targets.put("hot_share_target", HOT_SHARE_TARGET);
    targets.put("fill_ratio", Stats.round2(fillRatio));
    targets.put("fill_ratio_target", FILL_RATIO_TARGET);
    m.put("targets", targets);
    return m;
  }

  /**
   * The bar chart of p50 and p99 (logarithmic: they span decades): {@code next} the session's
   * steps, {@code path} the same without it, with prefetch, without, all in memory; the plain array
   * gather of the in-memory steps' rows; random lookups within the budget.
   */
  public void chart(Path png) throws IOException {
    Map<String, Timings> bars = new LinkedHashMap<>();
    for (String via : List.of("next", "path")) {
      Function<Loops, Result> loop = via.equals("next") ? Loops::sessionNext : Loops::dataPath;
      bars.put(via + ": pref.", loop.apply(prefetch).timings());
      bars.put(via + ": none", loop.apply(noPrefetch).timings());
      bars.put(via + ": mem.", loop.apply(inMemory).timings());
    }
    bars.put("short[]", array);
    bars.put("random", random.timings());
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    series.put("p50", new LinkedHashMap<>());
    series.put("p99", new LinkedHashMap<>());
    bars.forEach((name, t) -> series.get("p50").put(name, t.p50Us()));
    bars.forEach((name, t) -> series.get("p99").put(name, t.p99Us()));
    String title =
        String.format(
            "B = %d rows of a cache %dx the budget (%d MiB / %d MiB)",
            config.batch(),
            config.cacheBytes() / config.budgetBytes(),
            config.cacheBytes() >> 20,
            config.budgetBytes() >> 20);
    Charts.bars(png, title, "us per batch (log)", series, true);
  }

  private double median(int node, ToDoubleFunction<EmbeddedNodes.Fill> value) {
    return Stats.median(fills.get(node).stream().mapToDouble(value).toArray());
  }

  private double ratio(Function<Loops, Result> which) {
    return which.apply(prefetch).timings().p50Us() / which.apply(inMemory).timings().p50Us();
  }

  /** One line per configuration of B rows: p50, p99, batches/s and the share of hot hits. */
  private Table table() {
    Table t =
        new Table(null)
            .col("configuration", "B=" + config.batch(), "%-46s")
            .col("p50_us", "p50 us", "%9.1f")
            .col("p99_us", "p99 us", "%9.1f")
            .col("batches_per_s", "batches/s", "%10d")
            .col("hot_share", "hot share", "%9.4f");
    List<String> names = List.of("prefetch", "no prefetch", "all in memory");
    List<Loops> loops = List.of(prefetch, noPrefetch, inMemory);
    for (int i = 0; i < loops.size(); i++) {
      Result next = loops.get(i).sessionNext();
      Result path = loops.get(i).dataPath();
      row(
          t,
          "trainer, " + names.get(i) + ": session next()",
          next.timings(),
          next.hitsAfterFirstStep());
      row(t, "trainer, " + names.get(i) + ": data path", path.timings(), path.hitsAfterFirstStep());
    }
    row(t, "same batches, all in memory: lookupInto", lookupInto, null);
    row(t, "same batches, plain short[] gather", array, null);
    return row(t, "random order, budget: lookupInto", random.timings(), random.hits());
  }

  private static Table row(Table t, String name, Timings timings, Hits hits) {
    Double hot = hits == null ? null : hits.hotShare();
    return t.row(name, timings.p50Us(), timings.p99Us(), timings.batchesPerS(), hot);
  }

  private static String met(boolean met) {
    return met ? "met" : "missed";
  }
}
