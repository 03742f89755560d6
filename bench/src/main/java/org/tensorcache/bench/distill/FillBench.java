package org.tensorcache.bench.distill;

import ai.djl.pytorch.jni.JniUtils;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.byo.BenchModel;
import org.tensorcache.bench.byo.PythonEnv;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.TokenOutput;
import org.tensorcache.model.runner.TopKTeacherRunner;
import org.tensorcache.model.usermodel.TeacherModel;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.TokenCoding;

/**
 * The teacher's fill next to a plain eager-PyTorch teacher loop on the same tokenized rows and
 * threads: the byo part's seeded Qwen2 model of Qwen's vocabulary (151,936 ids), top-64 of every
 * completion token. TensorCache's side runs the runner and codes the rows as a fill does (without
 * the segment write); PyTorch's ({@code scripts/bench_teacher.py}) runs the Hugging Face model at
 * batch 1 (its fastest on a CPU) and 8, with {@code torch.set_num_threads} equal. Both sides run
 * every row once untimed first, so the figures are a long fill's steady state.
 */
public final class FillBench {
  static final int K = 64;
  private static final String MODEL = "wide";

  private FillBench() {}

  public static Map<String, Object> run(Path work, RunSize size) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Path dir = Files.createDirectories(work.resolve("byo")).toAbsolutePath();
    PythonEnv python = size == RunSize.SMOKE ? PythonEnv.existing(dir) : PythonEnv.find(dir);
    BenchModel bench = python.usable() ? BenchModel.obtain(python, dir, size) : null;
    if (bench == null) {
      out.put("left_out", "no bench models or no Python with torch: " + python.reason());
      System.out.println("teacher fill: left out, " + out.get("left_out"));
      return out;
    }
    int threads = Runtime.getRuntime().availableProcessors();
    Path run = Files2.fresh(work.resolve("distill-fill"));
    Path rows = run.resolve("teacher-rows.jsonl");
    int rowCount = size.pick(384, 96, 8);
    Path prefs = bench.rows("dataset", rowCount);
    Path hf = bench.path(MODEL, "hf_dir");
    exec(
        python,
        List.of(
            "write-rows", "--hf-dir", hf.toString(), "--dataset", prefs + "", "--out", rows + ""));
    Table table =
        new Table(
                "teacher fill, top-"
                    + K
                    + ", "
                    + bench.describe(MODEL)
                    + ", "
                    + threads
                    + " threads")
            .col("side", "%-34s")
            .col("batch", "%6s")
            .col("rows", "%6d")
            .col("completion_tokens", "tokens", "%8d")
            .col("seconds", "%9.2f")
            .col("tokens_per_s", "tokens/s", "%10.1f");
    double[] ours = tensorCache(bench.path(MODEL, "model_dir"), rows);
    table.row(
        "tensorcache (fill's runner + coding)",
        "budget",
        (int) ours[0],
        (long) ours[1],
        ours[2],
        ours[1] / ours[2]);
    for (int b : new int[] {1, 8}) {
      Path json = run.resolve("eager-b" + b + ".json");
      exec(
          python,
          List.of(
              "run",
              "--hf-dir",
              hf.toString(),
              "--rows",
              rows.toString(),
              "--k",
              "" + K,
              "--batch-size",
              "" + b,
              "--threads",
              "" + threads,
              "--warmup-rows",
              "" + rowCount,
              "--out",
              json.toString()));
      JsonNode r = new ObjectMapper().readTree(json.toFile());
      table.row(
          "eager PyTorch (transformers)",
          "" + b,
          r.path("rows").asInt(),
          r.path("completion_tokens").asLong(),
          r.path("seconds").asDouble(),
          r.path("tokens_per_s").asDouble());
    }
    out.put("threads", threads);
    out.put("djl_torch_threads", JniUtils.getNumThreads());
    out.put("sides", table.print());
    return out;
  }

  /** Rows, completion tokens and seconds of the fill's runner and coding over {@code rows}. */
  private static double[] tensorCache(Path modelDir, Path rows) throws Exception {
    Truncation none = new Truncation(0, Truncation.Mode.parse("keep_start"));
    BudgetSettings settings = new BudgetSettings(TokenBudget.DEFAULT_BATCH_TOKENS, 2L << 30);
    try (TeacherModel teacher = TeacherModel.open(modelDir, K, 1f, none, settings)) {
      ExampleSet prepared = teacher.prepare(ExampleSet.load(rows, DataFormat.COMPLETION_TOKENS));
      List<Example> all = prepared.examples();
      CacheSpec spec =
          CacheSpec.teacher(
              "teacher", all.size(), all.size(), new TokenCoding.TopK(teacher.vocab(), K, false));
      RowCodec codec = RowCodec.of(spec);
      try (TopKTeacherRunner runner = teacher.newRunner(DataFormat.COMPLETION_TOKENS)) {
        List<List<Example>> groups = new ArrayList<>();
        for (int[] group : teacher.planner().groups(all)) {
          List<Example> batch = new ArrayList<>(group.length);
          for (int i : group) {
            batch.add(all.get(i));
          }
          groups.add(batch);
        }
        for (List<Example> batch : groups) {
          runner.run(batch); // warm-up: the traced model specializes once per padded length
        }
        long tokens = 0;
        long t0 = System.nanoTime();
        for (List<Example> batch : groups) {
          TokenOutput o = runner.run(batch);
          for (int r = 0; r < o.size(); r++) {
            Object[] values = new Object[3];
            for (int f = 0; f < 3; f++) {
              values[f] = o.value(f, r);
            }
            codec.encode(o.tokens(r), values);
            tokens += o.tokens(r);
          }
        }
        return new double[] {all.size(), tokens, (System.nanoTime() - t0) / 1e9};
      }
    }
  }

  private static void exec(PythonEnv python, List<String> args) throws Exception {
    List<String> command = python.command(BenchModel.scripts().resolve("bench_teacher.py"), args);
    int code = PythonEnv.exec(command, 3600);
    if (code != 0) {
      throw new IllegalStateException(String.join(" ", command) + " exited " + code);
    }
  }
}
