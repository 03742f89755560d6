package org.tensorcache.bench.byo;

import ai.djl.pytorch.jni.JniUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.fields.DType;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.usermodel.UserModel;

/**
 * One JVM-side measurement in a process of its own (started by {@link ChildRun#jvm}), so that its
 * peak resident memory is its own: {@code fill} (TensorCache's fill through the embedded node, the
 * cache defined as {@code tensorcache fill --model-dir ...} defines it) or {@code bare} (the bare
 * DJL loop on a format-1 model in fixed micro-batches of rows). Each loads, warms up on the first
 * rows apart from the timed run, then times every row once; it writes its figures and its memory
 * ({@code VmRSS} after loading, {@code VmHWM} at the end) to {@code --out}, its values to {@code
 * --values}.
 *
 * <p>Usage: {@code ByoChild fill|bare --model-dir DIR --dataset FILE --max-length L --warmup-rows K
 * --work DIR --out FILE [--values FILE] [--batch-tokens N] [--memory-bound SIZE]}.
 */
public final class ByoChild {
  private ByoChild() {}

  /** Runs one measurement; a failure is written to {@code --out} and ends with exit code 1. */
  public static void main(String[] argv) throws Exception {
    String mode = argv.length > 0 ? argv[0] : "";
    Map<String, String> a = new HashMap<>();
    for (int i = 1; i + 1 < argv.length; i += 2) {
      a.put(argv[i], argv[i + 1]);
    }
    Path out = Path.of(a.getOrDefault("--out", "byo-child.json"));
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("ok", true);
    r.put("mode", mode);
    int code = 0;
    try {
      switch (mode) {
        case "fill" -> fill(a, r);
        case "bare" -> bare(a, r);
        default ->
            throw new IllegalArgumentException(
                "mode '" + mode + "' unknown, expected fill or bare");
      }
    } catch (Exception | Error e) {
      e.printStackTrace();
      r.put("ok", false);
      r.put("error", e.toString());
      code = 1;
    }
    r.put("peak_rss_bytes", ProcMemory.peakRss());
    r.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
    ChildRun.write(out, r);
    // the node may leave non-daemon threads behind
    System.exit(code);
  }

  private static void fill(Map<String, String> a, Map<String, Object> r) throws Exception {
    Path work = Files.createDirectories(Path.of(a.get("--work")));
    List<String> job =
        new ArrayList<>(
            List.of(
                "--data-dir",
                work.resolve("data").toString(),
                "--model-dir",
                a.get("--model-dir"),
                "--dataset",
                a.get("--dataset"),
                "--format",
                "text",
                "--runner",
                "logprob",
                "--max-length",
                a.get("--max-length"),
                "--truncation-mode",
                "keep_start",
                "--cache-name",
                "byo"));
    for (String option : List.of("--batch-tokens", "--memory-bound")) {
      if (a.containsKey(option)) {
        job.addAll(List.of(option, a.get(option)));
      }
    }
    r.put("job_options", String.join(" ", job));
    long t0 = System.nanoTime();
    CacheDefinition definition = JobDefinitions.definition(job.toArray(String[]::new));
    loaded(r, t0);
    int rows = Math.toIntExact(definition.spec().n());
    int warmup = Integer.parseInt(a.get("--warmup-rows"));
    long w0 = System.nanoTime();
    try (NodeFill node = NodeFill.start(definition, warmup, work)) {
      r.put("warmup_rows", Math.min(rows, warmup));
      r.put("warmup_seconds_with_node_start", (System.nanoTime() - w0) / 1e9);
      r.put("rss_before_timed_bytes", ProcMemory.rss());
      Map<String, Object> timed = node.fill();
      timed(r, rows, timed);
      values(a, node.values());
    }
  }

  private static void bare(Map<String, String> a, Map<String, Object> r) throws Exception {
    Truncation truncation =
        new Truncation(Integer.parseInt(a.get("--max-length")), Truncation.Mode.KEEP_START);
    long t0 = System.nanoTime();
    // the loop packs nothing under a bound: the bound only keeps every row acceptable
    BudgetSettings unbounded = new BudgetSettings(TokenBudget.DEFAULT_BATCH_TOKENS, 1L << 40);
    try (UserModel user =
        UserModel.open(
            Path.of(a.get("--model-dir")),
            UserModel.Runner.LOGPROB,
            truncation,
            DType.F32,
            unbounded)) {
      ExampleSet data = user.prepare(ExampleSet.load(Path.of(a.get("--dataset")), DataFormat.TEXT));
      BareLoop loop = new BareLoop(user.model(), data.size());
      loaded(r, t0);
      List<TokenizedPreference> rows = new ArrayList<>();
      for (Example e : data.examples()) {
        rows.add(Example.as(TokenizedPreference.class, e, "byo"));
      }
      int micro = ByoSize.BARE_MICRO_BATCH;
      int padId = Math.max(0, user.directory().padTokenId()); // as the runner pads
      List<PaddedBatches.Micro> batches = PaddedBatches.of(rows, truncation, padId, micro);
      int warmup = Math.min(rows.size(), Integer.parseInt(a.get("--warmup-rows")));
      long w0 = System.nanoTime();
      loop.warmUp(PaddedBatches.of(rows.subList(0, warmup), truncation, padId, micro));
      r.put("warmup_rows", warmup);
      r.put("warmup_seconds", (System.nanoTime() - w0) / 1e9);
      r.put("micro_batch_rows", micro);
      r.put("rss_before_timed_bytes", ProcMemory.rss());
      timed(r, data.size(), loop.run(batches));
      values(a, loop.values());
    }
  }

  private static void loaded(Map<String, Object> r, long t0) {
    r.put("load_seconds", (System.nanoTime() - t0) / 1e9);
    r.put("rss_after_load_bytes", ProcMemory.rss());
    r.put("libtorch_threads", JniUtils.getNumThreads());
    r.put("libtorch_interop_threads", JniUtils.getNumInteropThreads());
  }

  private static void timed(Map<String, Object> r, int rows, Map<String, Object> timed) {
    double seconds = (Double) timed.get("seconds");
    r.put("rows", rows);
    r.put("seconds", seconds);
    r.put("examples_per_s", rows / seconds);
    r.put("timed", timed);
  }

  private static void values(Map<String, String> a, float[][] values) throws Exception {
    if (a.containsKey("--values")) {
      Map<String, Object> v = new LinkedHashMap<>();
      for (int f = 0; f < NodeFill.FIELDS.size(); f++) {
        v.put(NodeFill.FIELDS.get(f), values[f]);
      }
      ChildRun.write(Path.of(a.get("--values")), v);
    }
  }
}
