package org.tensorcache.bench.byo;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Table;

/**
 * The part's results: prints the medians, ratios and targets, and writes {@code byo.json} and its
 * chart {@code byo.png}. Targets are reported with whether they were met, never enforced.
 */
final class ByoReport {
  private static final double VS_TRL_DEFAULT = 2.0;
  private static final double VS_TRL_BEST = 1.5;
  private static final List<String> LABELS =
      List.of("TensorCache fill", "TRL, batch 8", "TRL, best batch", "bare DJL loop");

  private final ByoSize size;
  final Map<String, Object> json = new LinkedHashMap<>();
  final List<ModelRun> models = new ArrayList<>();
  Map<String, Object> memoryCheck;

  ByoReport(ByoSize size, int threads, List<String> jvmOptions, PythonEnv python) {
    this.size = size;
    json.put("benchmark", "byo");
    json.put("when", Instant.now().toString());
    Map<String, Object> machine = new LinkedHashMap<>(Results.machine());
    String cpu = ProcMemory.field("/proc/cpuinfo", "model name");
    machine.put("cpu", cpu == null ? "unknown" : cpu);
    machine.put("memory_total_mib", ProcMemory.mib(ProcMemory.bytes("/proc/meminfo", "MemTotal")));
    machine.put("memory_available_mib_at_start", ProcMemory.mib(ProcMemory.available()));
    machine.put("load_average_at_start", ProcMemory.loadAverage());
    json.put("machine", machine);
    json.put("size", size.size().label());
    Map<String, Object> rows = new LinkedHashMap<>();
    for (var e : size.models().entrySet()) {
      ByoSize.Rows r = e.getValue();
      rows.put(
          e.getKey(),
          Map.of("rows", r.rows(), "trl_sweep_rows", r.sweep(), "warmup_rows", r.warmupRows()));
    }
    json.put("rows", rows);
    json.put("rounds", size.rounds());
    json.put("threads", threads);
    json.put(
        "python",
        python.usable()
            ? python.executable() + " (" + python.origin() + ")"
            : "none usable: " + python.reason());
    Map<String, Object> method = new LinkedHashMap<>();
    method.put(
        "order",
        "per model, a sweep of TRL's batch size on its first rows (trl_sweep_rows) picks its best;"
            + " then each round runs (a) TensorCache's fill, (b) TRL at batch 8, (b) TRL at its best"
            + " batch (the batch-8 runs when that is 8), (c) the bare loop. Where the sweep times"
            + " the same rows as the rounds, its runs are the first round's TRL runs");
    method.put(
        "processes",
        "every measurement in a process of its own: Python for TRL, a child JVM ("
            + String.join(" ", jvmOptions)
            + ", OMP_WAIT_POLICY=PASSIVE) for (a) and (c); "
            + threads
            + " threads each (torch.set_num_threads, ai.djl.pytorch.num_threads)");
    method.put(
        "timing",
        "(a) the fill from the coordinator's StartFill until every range is persisted, (b) TRL's"
            + " DPOTrainer._precompute_ref_logps as scripts/bench_trl.py times it, (c) the loop over"
            + " every row; never process start, model load or tokenization. Each process first"
            + " computes its first rows (warmup_rows) once, untimed (TRL: --warmup-rows; (a): a warm-up cache of those rows filled"
            + " through the same node; (c): those rows' micro-batches), so that no side pays"
            + " first-call costs in its timing");
    method.put(
        "memory",
        "peak_rss: VmHWM of the measurement's own process (load and warm-up included);"
            + " rss_before_timed: VmRSS before the timed part; rss_after_load: VmRSS right after the"
            + " model was loaded (JVM)");
    method.put(
        "settings",
        "(a) format-2 export (body.pt + head.pt) at the default --batch-tokens and --memory-bound;"
            + " (b) max_length 1024, truncation keep_start, float32, CPU; (c) format-1 export"
            + " (model.pt, logits at every position), 8 rows per forward in data order, padded to"
            + " the longest");
    json.put("method", method);
  }

  @SuppressWarnings("unchecked")
  void printAndWrite(Path resultsDir, double seconds) throws IOException {
    System.out.printf(
        "== bring your own model (%s: medians of %d rounds, %s threads) ==%n",
        size.size().label(), size.rounds(), json.get("threads"));
    Table sides =
        new Table(null)
            .col("model", "model", "%-6s")
            .col("side", "side", "%-40s")
            .col("examples_per_s", "examples/s", "%11.3f")
            .col("peak_rss_mib", "peak MiB", "%9d")
            .col("fill_over_side", "TC/side", "%8.2fx")
            .col("padded_over_real", "padded/real", "%11s")
            .col("left_out", "", "left out: %s");
    Map<String, Object> byModel = new LinkedHashMap<>();
    for (ModelRun m : models) {
      byModel.put(m.name, m.toMap());
      row(sides, m, "tensorcache", "(a) TensorCache fill", "tensorcache_padding_factor");
      row(sides, m, "trl_default", "(b) TRL batch 8", null);
      row(sides, m, "trl_best", "(b) TRL best batch (" + m.bestBatch() + ")", null);
      row(sides, m, "bare_loop", "(c) bare DJL loop", "bare_loop_padding_factor");
    }
    json.put("sides", sides.print());
    for (ModelRun m : models) {
      System.out.printf(
          "%-6s token budget sweep: %s; best --batch-tokens %d%n",
          m.name, budgets(m), ModelRun.fastest(m.budgetSweep));
    }
    json.put("models", byModel);
    if (memoryCheck != null) {
      json.put("memory_check", memoryCheck);
      System.out.println("memory check: " + memoryCheck.get("fill"));
    }
    System.out.println("targets (reported, never enforced):");
    List<Map<String, Object>> targets = new ArrayList<>();
    for (ModelRun m : models) {
      Double d = m.ratio("trl_default");
      Double b = m.ratio("trl_best");
      String vs = m.name + ": TensorCache / TRL at ";
      target(
          targets,
          vs + "batch 8 examples/s >= " + VS_TRL_DEFAULT,
          d,
          d != null && d >= VS_TRL_DEFAULT);
      target(targets, vs + "its best batch >= " + VS_TRL_BEST, b, b != null && b >= VS_TRL_BEST);
      double tc = m.peak("tensorcache");
      double trl = m.peak("trl_default");
      boolean both = Double.isFinite(tc) && Double.isFinite(trl);
      target(
          targets,
          m.name + ": TensorCache peak RSS <= TRL at batch 8 peak RSS",
          both ? Math.round(tc) + " MiB vs " + Math.round(trl) + " MiB" : null,
          both && tc <= trl);
      Map<?, ?> values = (Map<?, ?>) m.values.get("tensorcache_vs_trl");
      target(
          targets,
          m.name + ": log-probs within " + Agreement.TOLERANCE + " of TRL's (relative)",
          values.get("max_relative_diff"),
          Boolean.TRUE.equals(values.get("within_tolerance")));
    }
    json.put("targets", targets);
    ((Map<String, Object>) json.get("machine"))
        .put("load_average_at_end", ProcMemory.loadAverage());
    json.put("total_seconds", Math.round(seconds));
    System.out.printf("byo: %.0f s in all%n", seconds);
    Results.write(resultsDir.resolve("byo.json"), json);
    if (models.isEmpty()) {
      System.out.println("no chart: nothing was measured");
    } else {
      chart(resultsDir.resolve("byo.png"), models);
    }
  }

  private static void row(Table t, ModelRun m, String side, String label, String padding) {
    String why = m.missing(side);
    boolean measured = why == null;
    Object factor = padding == null ? null : m.padding.get(padding);
    t.row(
        m.name,
        label,
        measured ? m.rate(side) : null,
        measured ? Math.round(m.peak(side)) : null,
        measured && !side.equals("tensorcache") ? m.ratio(side) : null,
        measured && factor != null ? factor.toString() : null,
        measured ? null : why.lines().findFirst().orElse(""));
  }

  /** Prints a target with whether it was met, and adds it to {@code out}. */
  private static void target(
      List<Map<String, Object>> out, String what, Object figure, boolean met) {
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("target", what);
    t.put("figure", figure == null ? "not measured" : figure);
    t.put("met", met);
    out.add(t);
    System.out.printf("  %-58s %-26s %s%n", what, t.get("figure"), met ? "met" : "NOT met");
  }

  private static String budgets(ModelRun m) {
    List<String> each = new ArrayList<>();
    m.budgetSweep.forEach(
        (t, x) ->
            each.add(
                t + ": " + (x.ok() ? String.format("%.3f", x.get("examples_per_s")) : "left out")));
    return String.join(", ", each);
  }

  /**
   * {@code byo.png}: per model, the median examples/s of the four sides (a logarithmic axis),
   * beside their median peak resident memory; a side left out shows as 0.
   */
  private static void chart(Path png, List<ModelRun> models) throws IOException {
    List<CategoryChart> charts = new ArrayList<>();
    for (boolean rate : new boolean[] {true, false}) {
      CategoryChart chart =
          new CategoryChartBuilder()
              .width(700)
              .height(520)
              .title(
                  rate ? "Examples/s (higher is better)" : "Peak resident memory (lower is better)")
              .yAxisTitle(rate ? "examples/s" : "MiB")
              .build();
      chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
      chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
      chart.getStyler().setChartBackgroundColor(Color.WHITE);
      double least = Double.MAX_VALUE;
      for (int s = 0; s < LABELS.size(); s++) {
        String side = ModelRun.SIDES.get(s);
        List<Double> y = new ArrayList<>();
        for (ModelRun m : models) {
          double v = rate ? m.rate(side) : m.peak(side);
          y.add(Double.isFinite(v) ? v : 0);
          least = Math.min(least, y.get(y.size() - 1));
        }
        chart.addSeries(LABELS.get(s), models.stream().map(m -> m.name).toList(), y);
      }
      if (rate && least > 0) {
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(least / 2))));
      }
      charts.add(chart);
    }
    Files.createDirectories(png.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(charts, 1, 2, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    System.out.println("written " + png);
  }
}
