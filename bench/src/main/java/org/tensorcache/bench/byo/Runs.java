package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts the measurements of one benchmark run, each in a process of its own with the same number
 * of threads: TRL's precompute ({@code scripts/bench_trl.py}), TensorCache's fill and the bare loop
 * ({@link ByoChild} in a child JVM). Logs, results and values go to numbered files under the run's
 * directory. A measurement whose largest tensor would not fit in the memory the machine has
 * available is left out, saying so, rather than started.
 */
final class Runs {
  /** Most seconds one measurement may take. */
  private static final long TIMEOUT_S = 3600;

  /** Bytes a process holds besides its model and its largest tensor (interpreter, JVM, libs). */
  private static final long BASELINE_BYTES = 1536L << 20;

  /** Part of the available memory a measurement may plan to use. */
  private static final double MEMORY_SHARE = 0.8;

  private final PythonEnv python;
  private final Path dir;
  private final int threads;
  private final List<String> jvmOptions;
  private int warmupRows;
  private int count;
  private String model = "";

  /** Runs with {@code threads} threads each, child JVMs with {@code jvmOptions}. */
  Runs(PythonEnv python, Path dir, int threads, List<String> jvmOptions) {
    this.python = python;
    this.dir = dir;
    this.threads = threads;
    this.jvmOptions = jvmOptions;
  }

  /**
   * TRL's precompute of {@code dataset} at {@code batch} rows per forward; its values per row to
   * {@code values} unless null.
   */
  Measurement trl(Path hfDir, Path dataset, int batch, Path values, long estimateBytes)
      throws IOException, InterruptedException {
    if (!python.usable()) {
      return Measurement.missing("no Python with torch, transformers and TRL: " + python.reason());
    }
    String tooLarge = tooLarge(estimateBytes, "TRL's logits of its largest batch");
    if (tooLarge != null) {
      return Measurement.missing(tooLarge);
    }
    String tag = next("trl-b" + batch);
    String load = ProcMemory.loadAverage();
    List<String> args = new ArrayList<>();
    args.addAll(List.of("--hf-dir", hfDir.toString(), "--dataset", dataset.toString()));
    args.addAll(List.of("--batch-size", Integer.toString(batch)));
    args.addAll(List.of("--threads", Integer.toString(threads)));
    args.addAll(List.of("--max-length", Integer.toString(ByoSize.MAX_LENGTH)));
    args.addAll(List.of("--truncation-mode", "keep_start"));
    args.addAll(List.of("--warmup-rows", Integer.toString(warmupRows)));
    Path out = dir.resolve(tag + ".json");
    args.addAll(List.of("--out", out.toString()));
    if (values != null) {
      args.addAll(List.of("--values", values.toString()));
    }
    List<String> command = python.command(BenchModel.scripts().resolve("bench_trl.py"), args);
    // the environment as a user's: the script itself sets what TRL's precompute needs
    return Measurement.ofTrl(
            ChildRun.run(command, Map.of(), out, dir.resolve(tag + ".log"), TIMEOUT_S))
        .withLoad(load);
  }

  /**
   * TensorCache's fill of {@code dataset} on the format-2 {@code modelDir} at the job defaults, or
   * at {@code batchTokens} unless 0; its values to {@code values} unless null.
   */
  Measurement fill(Path modelDir, Path dataset, int maxLength, int batchTokens, Path values)
      throws IOException, InterruptedException {
    String tag = next(batchTokens > 0 ? "fill-t" + batchTokens : "fill");
    List<String> args = new ArrayList<>(List.of("fill"));
    if (batchTokens > 0) {
      args.addAll(List.of("--batch-tokens", Integer.toString(batchTokens)));
    }
    return jvm(tag, args, modelDir, dataset, maxLength, values);
  }

  /**
   * The bare loop over the format-1 {@code logitsDir}; its values to {@code values} unless null.
   */
  Measurement bare(Path logitsDir, Path dataset, Path values, long estimateBytes)
      throws IOException, InterruptedException {
    String tooLarge = tooLarge(estimateBytes, "the bare loop's logits of its largest micro-batch");
    if (tooLarge != null) {
      return Measurement.missing(tooLarge);
    }
    String tag = next("bare");
    return jvm(tag, List.of("bare"), logitsDir, dataset, ByoSize.MAX_LENGTH, values);
  }

  private Measurement jvm(
      String tag, List<String> mode, Path modelDir, Path dataset, int maxLength, Path values)
      throws IOException, InterruptedException {
    Path out = dir.resolve(tag + ".json");
    List<String> args = new ArrayList<>(mode);
    args.addAll(List.of("--model-dir", modelDir.toString(), "--dataset", dataset.toString()));
    args.addAll(List.of("--max-length", Integer.toString(maxLength)));
    args.addAll(List.of("--warmup-rows", Integer.toString(warmupRows)));
    args.addAll(List.of("--work", dir.resolve(tag).toString(), "--out", out.toString()));
    if (values != null) {
      args.addAll(List.of("--values", values.toString()));
    }
    String load = ProcMemory.loadAverage();
    // as ./tensorcache sets it: libtorch's idle OpenMP threads sleep instead of spinning
    Map<String, String> env = Map.of("OMP_WAIT_POLICY", "PASSIVE");
    return Measurement.ofJvm(
            ChildRun.run(
                ChildRun.jvm(jvmOptions, args), env, out, dir.resolve(tag + ".log"), TIMEOUT_S))
        .withLoad(load);
  }

  /** Why a process needing {@code bytes} beyond its baseline is not started, or null. */
  private static String tooLarge(long bytes, String what) {
    long available = ProcMemory.available();
    long need = bytes + BASELINE_BYTES;
    if (available < 0 || need <= MEMORY_SHARE * available) {
      return null;
    }
    return String.format(
        "not run: %s and model need about %,d MiB, over %.0f%% of the %,d MiB this machine has"
            + " available",
        what, ProcMemory.mib(need), MEMORY_SHARE * 100, ProcMemory.mib(available));
  }

  /**
   * Names the files of the measurements that follow after {@code name} (the model's); each warms up
   * on its first {@code warmupRows} rows.
   */
  void model(String name, int warmupRows) {
    this.model = name + "-";
    this.warmupRows = warmupRows;
  }

  /** A numbered name, so that the files of every measurement stay apart. */
  private String next(String name) {
    return String.format("%02d-%s%s", ++count, model, name);
  }

  /** Where the files of the measurement named {@code name} go. */
  Path file(String name) {
    return dir.resolve(name);
  }
}
