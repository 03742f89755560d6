package org.tensorcache.bench.byo;

import ai.djl.pytorch.jni.JniUtils;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.usermodel.UserModel;

/**
 * A JVM-side measurement in a child JVM ({@link Runs}): {@code fill} (the cache defined as {@code
 * tensorcache fill --model-dir ...} defines it) or {@code bare} (the bare loop). It loads, warms up
 * on the first rows, times every row once, and writes its figures to {@code --out} and its values
 * to {@code --values}.
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
    ObjectMapper json = new ObjectMapper();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("ok", true);
    int code = 0;
    try {
      float[][] values =
          switch (mode) {
            case "fill" -> fill(a, r);
            case "bare" -> bare(a, r);
            default ->
                throw new IllegalArgumentException(
                    "mode '" + mode + "' unknown, expected fill or bare");
          };
      if (a.containsKey("--values")) {
        Map<String, Object> v = new LinkedHashMap<>();
        for (int f = 0; f < values.length; f++) {
          v.put(CausalLmLogprobRunner.FIELDS.get(f).name(), values[f]);
        }
        json.writeValue(Path.of(a.get("--values")).toFile(), v);
      }
    } catch (Exception | Error e) {
      e.printStackTrace();
      r.put("ok", false);
      r.put("error", e.toString());
      code = 1;
    }
    r.put("peak_rss_mib", ProcMemory.mib("VmHWM"));
    r.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
    json.writeValue(Path.of(a.getOrDefault("--out", "byo-child.json")).toFile(), r);
    // the node may leave non-daemon threads behind
    System.exit(code);
  }

  private static float[][] fill(Map<String, String> a, Map<String, Object> r) throws Exception {
    Path work = Files.createDirectories(Path.of(a.get("--work")));
    String job = "--format text --runner logprob --truncation-mode keep_start --cache-name byo";
    List<String> args = new ArrayList<>(List.of(job.split(" ")));
    args.addAll(List.of("--data-dir", work.resolve("data").toString()));
    for (String option : List.of("--model-dir", "--dataset", "--max-length", "--batch-tokens")) {
      if (a.containsKey(option)) {
        args.addAll(List.of(option, a.get(option)));
      }
    }
    long t0 = System.nanoTime();
    CacheDefinition definition = JobDefinitions.definition(args.toArray(String[]::new));
    loaded(r, t0);
    int rows = Math.toIntExact(definition.spec().n());
    int warmup = warmup(a, r, rows);
    try (NodeFill node = NodeFill.start(definition, warmup, work)) {
      r.put("rss_before_timed_mib", ProcMemory.mib("VmRSS"));
      timed(r, rows, node.fill());
      return node.values();
    }
  }

  private static float[][] bare(Map<String, String> a, Map<String, Object> r) throws Exception {
    var truncation =
        new Truncation(Integer.parseInt(a.get("--max-length")), Truncation.Mode.KEEP_START);
    long t0 = System.nanoTime();
    // the loop packs nothing under a bound: the bound only keeps every row acceptable
    BudgetSettings unbounded = new BudgetSettings(TokenBudget.DEFAULT_BATCH_TOKENS, 1L << 40);
    Path dir = Path.of(a.get("--model-dir"));
    try (UserModel user =
        UserModel.open(dir, UserModel.Runner.LOGPROB, truncation, DType.F32, unbounded)) {
      ExampleSet data = user.prepare(ExampleSet.load(Path.of(a.get("--dataset")), DataFormat.TEXT));
      BareLoop loop = new BareLoop(user.model());
      loaded(r, t0);
      List<TokenizedPreference> rows = Padding.rows(data);
      int padId = Math.max(0, user.directory().padTokenId()); // as the runner pads
      int warmup = warmup(a, r, rows.size());
      loop.run(BareLoop.batches(rows.subList(0, warmup), truncation, padId), new HashMap<>());
      List<BareLoop.Micro> batches = BareLoop.batches(rows, truncation, padId);
      r.put("rss_before_timed_mib", ProcMemory.mib("VmRSS"));
      Map<String, Object> timed = new LinkedHashMap<>();
      float[][] values = loop.run(batches, timed);
      timed(r, rows.size(), timed);
      return values;
    }
  }

  private static int warmup(Map<String, String> a, Map<String, Object> r, int rows) {
    int warmup = Math.min(rows, Integer.parseInt(a.get("--warmup-rows")));
    r.put("warmup_rows", warmup);
    return warmup;
  }

  private static void loaded(Map<String, Object> r, long t0) {
    r.put("load_seconds", (System.nanoTime() - t0) / 1e9);
    r.put("rss_after_load_mib", ProcMemory.mib("VmRSS"));
    r.put("libtorch_threads", JniUtils.getNumThreads());
    r.put("libtorch_interop_threads", JniUtils.getNumInteropThreads());
  }

  private static void timed(Map<String, Object> r, int rows, Map<String, Object> timed) {
    r.put("examples_per_s", rows / (Double) timed.get("seconds"));
    r.putAll(timed);
  }
}
