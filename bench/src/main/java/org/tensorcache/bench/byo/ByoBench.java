package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;

/**
 * Bring your own model: TensorCache's fill of a user's exported model through the embedded node,
 * next to TRL 1.13's own reference log-prob precompute ({@code DPOTrainer} with {@code
 * precompute_ref_log_probs=True}) at its default batch of 8 and at its best batch size, and next to
 * a bare DJL loop over fixed micro-batches of a logits model (what the product did before), on the
 * same rows, threads and machine, for two seeded Qwen2 models: {@code small} (an 8k vocabulary) and
 * {@code wide} (151,936 ids). Each measurement runs in a process of its own and reports its
 * examples/s and its peak resident memory; a sweep picks TRL's best batch size first, then rounds
 * take the four in turn, so that a shared machine's drift falls on all alike. Also: a sweep of the
 * fill's token budget, a memory check of the wide model on rows of up to 2,048 tokens, and the
 * values checked against TRL's.
 */
public final class ByoBench {
  private ByoBench() {}

  /**
   * Runs the part: files under {@code work/byo}, results in {@code resultsDir/byo.json} and {@code
   * byo.png}; what needs a missing Python is left out, saying so.
   */
  public static void run(Path work, Path resultsDir, RunSize runSize) throws Exception {
    long t0 = System.nanoTime();
    ByoSize size = ByoSize.of(runSize);
    Path dir = Files.createDirectories(work.resolve("byo")).toAbsolutePath();
    int threads = Runtime.getRuntime().availableProcessors();
    List<String> jvm = ChildRun.jvmOptions(threads, runSize == RunSize.SMOKE);
    // a smoke run takes seconds: it installs nothing
    PythonEnv python = runSize == RunSize.SMOKE ? PythonEnv.existing(dir) : PythonEnv.find(dir);
    System.out.println(
        python.usable()
            ? "python: " + python.executable() + " (" + python.origin() + ")"
            : "python: none usable (" + python.reason() + "): TRL is left out");
    ByoReport report = new ByoReport(size, threads, jvm, python);
    BenchModel bench = BenchModel.obtain(python, dir, size);
    if (bench != null) {
      Path run = Files2.fresh(dir.resolve("run-" + runSize.label()));
      Runs runs = new Runs(python, run, threads, jvm);
      System.out.printf(
          "each measurement in its own process with %d threads (torch in Python; a JVM with %s)"
              + " after a warm-up on its first rows; files in %s%n",
          threads, String.join(" ", jvm), run);
      for (String model : BenchModel.MODELS) {
        report.add(measure(bench, model, size, runs));
      }
      report.memoryCheck(MemoryCheck.run(bench, size, runs));
    } else {
      report.leftOut("no bench models and no Python to make them: " + python.reason());
    }
    report.printAndWrite(resultsDir, (System.nanoTime() - t0) / 1e9);
  }

  private static ModelRun measure(BenchModel bench, String name, ByoSize size, Runs runs)
      throws IOException, InterruptedException {
    ByoSize.Rows rows = size.rows(name);
    runs.model(name, rows.warmupRows());
    Path data = bench.dataset(rows.rows());
    int sweepRows = Math.min(rows.rows(), rows.sweepRows());
    Path sweepData = bench.dataset(sweepRows);
    long weights = bench.parameters(name) * 4L;
    int def = ByoSize.TRL_DEFAULT_BATCH;
    ModelRun m;
    Map<Integer, Long> trlBytes = new LinkedHashMap<>();
    Map<Integer, Long> sweepBytes = new LinkedHashMap<>();
    long bareBytes;
    try (Padding padding =
        Padding.of(
            bench.modelDir(name),
            data,
            ByoSize.MAX_LENGTH,
            BudgetSettings.DEFAULT,
            bench.vocab(name))) {
      m = new ModelRun(name, bench.describe(name), padding.figures());
      for (int b : size.trlBatches()) {
        trlBytes.put(b, trlBytes(padding.largestLogitsBytes(b, rows.rows()), weights));
        sweepBytes.put(b, trlBytes(padding.largestLogitsBytes(b, sweepRows), weights));
      }
      trlBytes.put(def, trlBytes(padding.largestLogitsBytes(def, rows.rows()), weights));
      // the logits of a micro-batch, two chunks of log-softmax, the weights
      bareBytes =
          padding.largestLogitsBytes(ByoSize.BARE_MICRO_BATCH, rows.rows())
              + (512L << 20)
              + weights;
    }
    System.out.printf("== %s; %d rows ==%n", m.description, rows.rows());
    m.sweepRows = sweepRows;
    for (int b : size.trlBatches()) {
      if (m.trlSweep.keySet().stream().anyMatch(earlier -> earlier >= sweepRows)) {
        continue; // one batch of every row already: a larger batch is the same computation
      }
      Path values = rows.sweepIsFirstRound() ? trlValues(runs, name, b) : null;
      Measurement x = runs.trl(bench.hfDir(name), sweepData, b, values, sweepBytes.get(b));
      m.trlSweep.put(b, x);
      print(name, "TRL sweep, batch " + b + ", first " + sweepRows + " rows", x);
    }
    int best = m.pickBest();
    System.out.printf("%s: TRL's best batch size in the sweep: %s%n", name, best < 0 ? "-" : best);
    for (int r = 0; r < size.rounds(); r++) {
      boolean first = r == 0;
      boolean reuse = first && rows.sweepIsFirstRound();
      Map<String, Measurement> round = new LinkedHashMap<>();
      m.rounds.add(round);
      String at = " round " + (r + 1) + "/" + size.rounds();
      Path tcValues = first ? runs.file(name + "-tensorcache-values.json") : null;
      Measurement tc = runs.fill(bench.modelDir(name), data, ByoSize.MAX_LENGTH, 0, tcValues);
      round.put("tensorcache", tc);
      print(name, "(a) TensorCache fill," + at, tc);
      Measurement d =
          reuse && m.trlSweep.containsKey(def)
              ? m.trlSweep.get(def)
              : runs.trl(
                  bench.hfDir(name),
                  data,
                  def,
                  first ? trlValues(runs, name, def) : null,
                  trlBytes.get(def));
      round.put("trl_default", d);
      print(name, "(b) TRL batch " + def + "," + at, d);
      Measurement b;
      if (best == def) {
        b = d;
      } else if (best < 0) {
        b = Measurement.missing("no batch size of the sweep ran");
      } else if (reuse) {
        b = m.trlSweep.get(best);
      } else {
        Path v = first ? trlValues(runs, name, best) : null;
        b = runs.trl(bench.hfDir(name), data, best, v, trlBytes.get(best));
      }
      round.put("trl_best", b);
      print(name, "(b) TRL best batch " + best + (best == def ? " (same runs)" : "") + "," + at, b);
      Path bareValues = first ? runs.file(name + "-bare-values.json") : null;
      Measurement bare = runs.bare(bench.logitsDir(name), data, bareValues, bareBytes);
      round.put("bare_loop", bare);
      print(name, "(c) bare DJL loop, format 1, 8 rows," + at, bare);
    }
    Path reference = trlValues(runs, name, def);
    if (!Files.isRegularFile(reference) && best > 0) {
      reference = trlValues(runs, name, best);
    }
    m.values.put("trl_values", reference.getFileName().toString());
    m.values.put(
        "tensorcache_vs_trl",
        Agreement.check(runs.file(name + "-tensorcache-values.json"), reference));
    m.values.put(
        "bare_loop_vs_trl", Agreement.check(runs.file(name + "-bare-values.json"), reference));
    System.out.printf("%s: values against TRL's: %s%n", name, m.values);
    for (int tokens : size.budgets()) {
      Measurement x =
          size.budgetSweepReusesRound() && tokens == TokenBudget.DEFAULT_BATCH_TOKENS
              ? m.rounds.get(0).get("tensorcache")
              : runs.fill(bench.modelDir(name), data, ByoSize.MAX_LENGTH, tokens, null);
      m.budgetSweep.put(tokens, x);
      print(name, "(a) TensorCache fill, --batch-tokens " + tokens, x);
    }
    return m;
  }

  /** Bytes TRL is expected to hold: its largest logits, a row's log-sum-exp, the weights. */
  private static long trlBytes(long logits, long weights) {
    return logits + logits / 4 + weights;
  }

  private static Path trlValues(Runs runs, String model, int batch) {
    return runs.file(model + "-trl-b" + batch + "-values.json");
  }

  /** Prints one measurement's line. */
  static void print(String model, String what, Measurement x) {
    if (x.ok()) {
      System.out.printf(
          "%-6s %-52s %9.3f examples/s (%.1f s), peak RSS %,6d MiB%n",
          model, what, x.examplesPerS(), x.seconds(), ProcMemory.mib(x.peakRss()));
    } else {
      System.out.printf("%-6s %-52s left out: %s%n", model, what, x.why());
    }
  }
}
