package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.tensorcache.bench.fixture.ChildProcess;

/**
 * Starts each measurement in a process of its own, so that its peak resident memory is its own:
 * TRL's precompute ({@code scripts/bench_trl.py}), the fill and the bare loop ({@link ByoChild}),
 * with the same threads and warm-up rows, files numbered in the run's directory. A failure is a
 * result too; one whose largest tensor would not fit the memory available is not started.
 */
final class Runs {
  private static final long TIMEOUT_S = 3600;

  /** Bytes a process holds besides its model and its largest tensor (interpreter, JVM, libs). */
  private static final long BASELINE_BYTES = 1536L << 20;

  /** Part of the available memory a measurement may plan to use. */
  private static final double MEMORY_SHARE = 0.8;

  /** The figures of {@code bench_trl.py}'s result taken as they are. */
  private static final String TRL_FIGURES =
      "examples_per_s seconds batch_size computed_rows dropped_rows warmup_rows tokens"
          + " padded_tokens max_padded_length load_seconds torch_threads interop_threads";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final PythonEnv python;
  private final Path dir;
  private final int threads;
  private final List<String> jvmOptions;
  private int warmupRows;
  private int count;
  private String model = "";

  Runs(PythonEnv python, Path dir, int threads, List<String> jvmOptions) {
    this.python = python;
    this.dir = dir;
    this.threads = threads;
    this.jvmOptions = jvmOptions;
  }

  /**
   * The child JVM's options: a small heap (the tensors are off it), {@code threads} libtorch
   * threads; {@code quickStart} (a smoke run, whose figures mean nothing) trades speed for
   * start-up.
   */
  static List<String> jvmOptions(int threads, boolean quickStart) {
    String libtorch = "-Dai.djl.pytorch.num_threads=" + threads;
    List<String> options = new ArrayList<>(List.of("-Xmx768m", libtorch, "-Dai.djl.offline=true"));
    if (quickStart) {
      options.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    }
    return options;
  }

  /** Names the files of the measurements that follow after model {@code name}. */
  void model(String name, int warmupRows) {
    this.model = name + "-";
    this.warmupRows = warmupRows;
  }

  Path file(String name) {
    return dir.resolve(name);
  }

  /**
   * TRL's precompute at {@code batch} rows per forward; its values to {@code values} unless null.
   */
  Measurement trl(Path hfDir, Path dataset, int batch, Path values, long estimateBytes)
      throws IOException, InterruptedException {
    String why =
        python.usable()
            ? tooLarge(estimateBytes, "TRL's logits of its largest batch")
            : "no Python with torch, transformers and TRL: " + python.reason();
    if (why != null) {
      return Measurement.missing(why);
    }
    List<String> args = List.of("--hf-dir", hfDir.toString(), "--batch-size", "" + batch);
    List<String> command = python.command(BenchModel.scripts().resolve("bench_trl.py"), args);
    command.addAll(List.of("--threads", "" + threads, "--truncation-mode", "keep_start"));
    command.addAll(inputs(dataset, ByoSize.MAX_LENGTH, values));
    // the environment as a user's: the script itself sets what TRL's precompute needs
    return run(next("trl-b" + batch), command, Map.of());
  }

  /**
   * TensorCache's fill on the format-2 {@code modelDir} at the job defaults, or at {@code
   * batchTokens} unless 0; its values to {@code values} unless null.
   */
  Measurement fill(Path modelDir, Path dataset, int maxLength, int batchTokens, Path values)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of("fill", "--model-dir", modelDir.toString()));
    if (batchTokens > 0) {
      args.addAll(List.of("--batch-tokens", Integer.toString(batchTokens)));
    }
    args.addAll(inputs(dataset, maxLength, values));
    return jvm(next(batchTokens > 0 ? "fill-t" + batchTokens : "fill"), args);
  }

  /**
   * The bare loop over the format-1 {@code logitsDir}; its values to {@code values} unless null.
   */
  Measurement bare(Path logitsDir, Path dataset, Path values, long estimateBytes)
      throws IOException, InterruptedException {
    String why = tooLarge(estimateBytes, "the bare loop's logits of its largest micro-batch");
    List<String> args = new ArrayList<>(List.of("bare", "--model-dir", logitsDir.toString()));
    args.addAll(inputs(dataset, ByoSize.MAX_LENGTH, values));
    return why != null ? Measurement.missing(why) : jvm(next("bare"), args);
  }

  /** The options both kinds of measurement take. */
  private List<String> inputs(Path dataset, int maxLength, Path values) {
    List<String> c = new ArrayList<>(List.of("--dataset", dataset.toString()));
    c.addAll(List.of("--max-length", "" + maxLength, "--warmup-rows", "" + warmupRows));
    if (values != null) {
      c.addAll(List.of("--values", values.toString()));
    }
    return c;
  }

  private Measurement jvm(String tag, List<String> args) throws IOException, InterruptedException {
    args.addAll(List.of("--work", file(tag).toString()));
    List<String> command = ChildProcess.jvm(jvmOptions, ByoChild.class.getName(), args);
    // as ./tensorcache sets it: libtorch's idle OpenMP threads sleep instead of spinning
    return run(tag, command, Map.of("OMP_WAIT_POLICY", "PASSIVE"));
  }

  /**
   * Runs {@code command} with {@code --out tag.json}; its figures from the result it wrote there,
   * with the machine's load when it started.
   */
  @SuppressWarnings("unchecked")
  private Measurement run(String tag, List<String> command, Map<String, String> env)
      throws IOException, InterruptedException {
    Path out = file(tag + ".json");
    Path log = file(tag + ".log");
    List<String> c = new ArrayList<>(command);
    c.addAll(List.of("--out", out.toString()));
    String load = ProcMemory.loadAverage();
    Files.deleteIfExists(out);
    OptionalInt exit = ChildProcess.run(c, env, log, Duration.ofSeconds(TIMEOUT_S));
    if (exit.isEmpty()) {
      return Measurement.missing("did not finish within " + TIMEOUT_S + " s (log " + log + ")");
    }
    JsonNode r = readTree(out);
    if (exit.getAsInt() != 0 || r == null || !r.path("ok").asBoolean(false)) {
      String why =
          r != null && r.hasNonNull("error")
              ? r.get("error").asText()
              : "exit code " + exit.getAsInt() + " (killed for memory?) without a result";
      List<String> lines = Files.readAllLines(log);
      String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
      return Measurement.missing(why + " (log " + log + "):\n" + tail);
    }
    // bench_trl.py's result has its own layout; ByoChild's holds the figures as they are
    Map<String, Object> f = r.has("memory") ? trlFigures(r) : JSON.convertValue(r, Map.class);
    f.remove("ok");
    f.put("load_average_at_start", load);
    return new Measurement(null, f);
  }

  /** The result in {@code out}, or null when there is none or it was cut short. */
  private static JsonNode readTree(Path out) {
    try {
      return JSON.readTree(out.toFile());
    } catch (IOException e) {
      return null;
    }
  }

  /** The figures of {@code scripts/bench_trl.py}'s result. */
  private static Map<String, Object> trlFigures(JsonNode r) {
    JsonNode m = r.path("memory");
    JsonNode v = r.path("versions");
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("peak_rss_mib", ProcMemory.mib(m.path("peak_rss_bytes").asLong(-1)));
    f.put("rss_before_timed_mib", ProcMemory.mib(m.path("rss_before_bytes").asLong(-1)));
    for (String k : TRL_FIGURES.split(" ")) {
      f.put(k, JSON.convertValue(r.get(k), Object.class));
    }
    f.put("forward_seconds", r.path("phases").path("forward_seconds").asDouble());
    String versions = "torch %s, transformers %s, trl %s";
    f.put(
        "versions", versions.formatted(text(v, "torch"), text(v, "transformers"), text(v, "trl")));
    f.put(
        "precompute_peak_rss_mib", ProcMemory.mib(m.path("precompute_peak_rss_bytes").asLong(-1)));
    return f;
  }

  private static String text(JsonNode node, String key) {
    return node.path(key).asText();
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

  /** A numbered name, so that the files of every measurement stay apart. */
  private String next(String name) {
    return String.format("%02d-%s%s", ++count, model, name);
  }
}
