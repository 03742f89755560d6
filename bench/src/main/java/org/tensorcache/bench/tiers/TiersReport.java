package org.tensorcache.bench.tiers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;
import org.tensorcache.bench.tiers.TrainerLoop.Loops;

/**
 * The figures of the tiers part: the results file's sections, the table and target lines, the
 * chart. {@code passes} made every range hot; {@code lookupInto} and {@code array} are the
 * in-memory session's batches without it and from the plain array; {@code random} within the
 * budget.
 */
public record TiersReport(
    TierConfig config,
    Fills fills,
    Loops prefetch,
    Loops noPrefetch,
    Loops inMemory,
    int passes,
    Timings lookupInto,
    Timings array,
    Map<String, Object> random) {
  /** A trainer's step with prefetch may take at most this many times the all-in-memory step. */
  static final double PREFETCH_P50_TARGET = 1.5;

  /** Share of a prefetching trainer's values after its first step that must be hot. */
  static final double HOT_SHARE_TARGET = 0.99;

  /** The fill with the budget next to the fill without it. */
  static final double FILL_RATIO_TARGET = 0.95;

  /** The sections of the results file. */
  public Map<String, Object> figures() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("fill", fills.toMap());
    m.put("trainer_prefetch", runs(prefetch));
    m.put("trainer_no_prefetch", runs(noPrefetch));
    Map<String, Object> all = runs(inMemory);
    all.put("passes_to_all_hot", passes);
    all.put("lookup_into_same_batches", lookupInto.toMap());
    m.put("trainer_in_memory", all);
    m.put("plain_array_same_batches", array.toMap());
    m.put("random_lookups", random);
    m.put("table", table().json());
    Map<String, Object> targets = new LinkedHashMap<>();
    targets.put("prefetch_p50_over_in_memory_next", Stats.round2(ratio(Loops::session)));
    targets.put("prefetch_p50_over_in_memory_data_path", Stats.round2(ratio(Loops::dataPath)));
    targets.put("prefetch_p50_target", PREFETCH_P50_TARGET);
    double hot = prefetch.session().afterFirstStep().hotShare();
    targets.put("hot_share_after_first_step", Stats.round(hot, 4));
    targets.put("hot_share_target", HOT_SHARE_TARGET);
    targets.put("fill_ratio", Stats.round2(fills.ratio()));
    targets.put("fill_ratio_target", FILL_RATIO_TARGET);
    m.put("targets", targets);
    return m;
  }

  /** Prints the table and one line per target. */
  public void print() {
    table().print();
    System.out.println(fills.line(FILL_RATIO_TARGET));
    double next = ratio(Loops::session);
    double path = ratio(Loops::dataPath);
    System.out.printf(
        "trainer with prefetch p50 / all in memory p50: session next() %.2f, data path %.2f"
            + " (target <= %.1f): target %s for next(), %s for the data path%n",
        next,
        path,
        PREFETCH_P50_TARGET,
        met(next <= PREFETCH_P50_TARGET),
        met(path <= PREFETCH_P50_TARGET));
    TrainerLoop.Result s = prefetch.session();
    double hot = s.afterFirstStep().hotShare();
    System.out.printf(
        "hot hits after the first step %.2f%% (target >= %.0f%%): target %s; mean prefetch lead"
            + " %.1f steps; peak held %.2f MiB of a %.2f MiB budget%n",
        hot * 100,
        HOT_SHARE_TARGET * 100,
        met(hot >= HOT_SHARE_TARGET),
        s.meanPrefetchLead(),
        s.peakBytesHeld() / 1048576.0,
        s.budgetBytes() / 1048576.0);
  }

  /**
   * The bar chart of p50 and p99 (logarithmic: they span decades): {@code next} the session's
   * steps, {@code path} the same without it, with prefetch, without, all in memory; the plain array
   * gather of the in-memory steps' rows; random lookups within the budget.
   */
  public void chart(Path png) throws IOException {
    Map<String, Double> p50 = new LinkedHashMap<>();
    Map<String, Double> p99 = new LinkedHashMap<>();
    put(p50, p99, "next: pref.", prefetch.session().timings());
    put(p50, p99, "next: none", noPrefetch.session().timings());
    put(p50, p99, "next: mem.", inMemory.session().timings());
    put(p50, p99, "path: pref.", prefetch.dataPath().timings());
    put(p50, p99, "path: none", noPrefetch.dataPath().timings());
    put(p50, p99, "path: mem.", inMemory.dataPath().timings());
    put(p50, p99, "short[]", array);
    p50.put("random", ((Number) random.get("p50_us")).doubleValue());
    p99.put("random", ((Number) random.get("p99_us")).doubleValue());
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    series.put("p50", p50);
    series.put("p99", p99);
    Charts.bars(
        png,
        String.format(
            "B = %d rows of a cache %dx the budget (%d MiB / %d MiB)",
            config.batch(),
            config.cacheBytes() / config.budgetBytes(),
            config.cacheBytes() >> 20,
            config.budgetBytes() >> 20),
        "us per batch (log)",
        series,
        true);
  }

  private static void put(
      Map<String, Double> p50, Map<String, Double> p99, String name, Timings t) {
    p50.put(name, t.p50Us());
    p99.put(name, t.p99Us());
  }

  private static Map<String, Object> runs(Loops r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("session_next", r.session().toMap());
    m.put("data_path", r.dataPath().toMap());
    return m;
  }

  private double ratio(Function<Loops, TrainerLoop.Result> which) {
    return which.apply(prefetch).timings().p50Us() / which.apply(inMemory).timings().p50Us();
  }

  /** One line per configuration of B rows: p50, p99, batches/s and the share of hot hits. */
  private Table table() {
    Table t =
        new Table(null)
            .col("configuration", "B=" + config.batch(), "%-46s")
            .col("p50_us", "p50 us", "%9.1f")
            .col("p99_us", "p99 us", "%9.1f")
            .col("batches_per_s", "batches/s", "%10.0f")
            .col("hot_share", "hot share", "%9.4f");
    for (Loops c : List.of(prefetch, noPrefetch, inMemory)) {
      String name = c == prefetch ? "prefetch" : c == noPrefetch ? "no prefetch" : "all in memory";
      row(t, "trainer, " + name + ": session next()", c.session().timings(), c.session());
      row(t, "trainer, " + name + ": data path", c.dataPath().timings(), c.dataPath());
    }
    row(t, "same batches, all in memory: lookupInto", lookupInto, null);
    row(t, "same batches, plain short[] gather", array, null);
    return t.row(
        "random order, budget: lookupInto",
        ((Number) random.get("p50_us")).doubleValue(),
        ((Number) random.get("p99_us")).doubleValue(),
        ((Number) random.get("batches_per_s")).doubleValue(),
        ((Number) ((Map<?, ?>) random.get("hits")).get("hot_share")).doubleValue());
  }

  private static void row(Table t, String name, Timings timings, TrainerLoop.Result r) {
    Double hot = r == null ? null : r.afterFirstStep().hotShare();
    t.row(name, timings.p50Us(), timings.p99Us(), timings.batchesPerS(), hot);
  }

  private static String met(boolean met) {
    return met ? "met" : "missed";
  }
}
