package org.tensorcache.bench.byo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;

/**
 * Bring your own model: the fill of two seeded Qwen2 models ({@code small}, {@code wide} with
 * 151,936 ids) next to TRL 1.13's own precompute ({@code precompute_ref_log_probs=True}) at batch 8
 * and at its best batch, and the bare DJL loop of before; also a token-budget sweep, a memory check
 * on long rows and the values against TRL's.
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
    List<String> jvm = Runs.jvmOptions(threads, runSize == RunSize.SMOKE);
    // a smoke run takes seconds: it installs nothing
    PythonEnv python = runSize == RunSize.SMOKE ? PythonEnv.existing(dir) : PythonEnv.find(dir);
    System.out.println(
        python.usable()
            ? "python: " + python.executable() + " (" + python.origin() + ")"
            : "python: none usable (" + python.reason() + "): TRL is left out");
    ByoReport report = new ByoReport(size, threads, jvm, python);
    BenchModel bench = BenchModel.obtain(python, dir, runSize);
    if (bench != null) {
      Path run = Files2.fresh(dir.resolve("run-" + runSize.label()));
      Runs runs = new Runs(python, run, threads, jvm);
      System.out.printf(
          "each measurement in its own process with %d threads (torch in Python; a JVM with %s)"
              + " after a warm-up on its first rows; files in %s%n",
          threads, String.join(" ", jvm), run);
      for (String model : BenchModel.MODELS) {
        report.models.add(ModelRun.measure(bench, model, size, runs));
      }
      report.memoryCheck = memoryCheck(bench, size, runs);
    } else {
      report.json.put("left_out", "no bench models and no Python to make them: " + python.reason());
    }
    report.printAndWrite(resultsDir, (System.nanoTime() - t0) / 1e9);
  }

  /**
   * Whether the fill keeps its memory bound on long rows: the wide model filling rows of 1,500 to
   * 2,048 tokens at the default token budget and memory bound, its peak resident memory against its
   * resident memory once the model is loaded.
   */
  private static Map<String, Object> memoryCheck(BenchModel bench, ByoSize size, Runs runs)
      throws Exception {
    String model = "wide";
    runs.model(model + "-long", 1);
    Path data = bench.rows("long_dataset", size.longRows());
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("model", model);
    c.put("rows", size.longRows());
    c.put("max_length", ByoSize.LONG_MAX_LENGTH);
    long bound;
    try (Padding padding = Padding.of(bench, model, data, ByoSize.LONG_MAX_LENGTH)) {
      bound = ProcMemory.mib(padding.budget().memoryBound());
      c.put("plan", padding.figures());
    }
    Path dir = bench.path(model, "model_dir");
    Measurement x = runs.fill(dir, data, ByoSize.LONG_MAX_LENGTH, 0, null);
    x.print(model, "(m) memory check, " + size.longRows() + " long rows");
    c.put("fill", x.toMap());
    c.put("memory_bound_mib", bound);
    if (!x.ok()) {
      c.put("within_bound", false);
      return c;
    }
    long peak = (long) x.get("peak_rss_mib");
    long loaded = (long) x.get("rss_after_load_mib");
    c.put("peak_rss_mib", peak);
    c.put("rss_after_load_mib", loaded);
    c.put("peak_minus_after_load_mib", peak - loaded);
    c.put("within_bound", peak - loaded <= bound);
    System.out.printf(
        "(m) peak RSS %,d MiB - RSS after load %,d MiB = %,d MiB; memory bound %,d MiB: %s%n",
        peak, loaded, peak - loaded, bound, peak - loaded <= bound ? "within" : "OVER");
    return c;
  }
}
