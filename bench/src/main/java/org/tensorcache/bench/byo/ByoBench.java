package org.tensorcache.bench.byo;

import ai.djl.Device;
import ai.djl.pytorch.jni.JniUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.usermodel.UserModel;

/**
 * Bring your own model: fill examples/s of a user's Hugging Face model (a seeded Llama exported
 * with {@code scripts/export_hf_model.py}) through the embedded node, next to a bare DJL loop over
 * the same traced model and batches and to the same model in Python PyTorch eager mode, at the same
 * micro-batch and thread count; checks that the three agree. An example is one preference row (its
 * chosen and its rejected sequence).
 *
 * <p>The rows are measured in chunks, each chunk by the three in turn (the order rotating from
 * chunk to chunk), so that the drift of a shared machine's speed falls on all three alike.
 */
public final class ByoBench {
  static final int MICRO_BATCH = 16;
  static final int ROWS = 512;
  static final int QUICK_ROWS = 128;
  static final int CHUNK_ROWS = 128;
  static final int QUICK_CHUNK_ROWS = 64;
  static final int WARMUP_BATCHES = 2;
  static final int MAX_LENGTH = 1024;
  static final long SEED = 20261123;

  /** Rows the Python run with the other attention implementation takes, in the full run only. */
  static final int OTHER_ATTENTION_ROWS = 128;

  private ByoBench() {}

  /**
   * Runs the part: files under {@code work/byo}, results in {@code resultsDir/byo.json} and {@code
   * byo.png}; a missing Python leaves out what needs it, saying so.
   */
  public static void run(Path work, Path resultsDir, boolean quick) throws Exception {
    Path dir = Files.createDirectories(work.resolve("byo")).toAbsolutePath();
    int rows = quick ? QUICK_ROWS : ROWS;
    int chunkRows = quick ? QUICK_CHUNK_ROWS : CHUNK_ROWS;
    PythonEnv python = PythonEnv.find(dir);
    System.out.println(
        python.usable()
            ? "python: " + python.executable() + " (" + python.origin() + ")"
            : "python: none usable (" + python.reason() + ")");
    BenchModel bench = BenchModel.obtain(python, dir, ROWS, SEED);
    if (bench == null) {
      return;
    }
    Path run = Files2.fresh(dir.resolve("run"));
    // the cache exactly as `tensorcache fill --model-dir DIR --dataset FILE ...` defines it
    CacheDefinition definition =
        JobDefinitions.definition(
            "--data-dir", run.resolve("data").toString(),
            "--model-dir", bench.modelDir().toString(),
            "--dataset", bench.dataset(rows).toString(),
            "--format", "text",
            "--runner", "logprob",
            "--max-length", Integer.toString(MAX_LENGTH),
            "--truncation-mode", "keep_start",
            "--micro-batch", Integer.toString(MICRO_BATCH),
            "--range-size", Integer.toString(chunkRows),
            "--cache-name", "byo-ref");
    List<TokenizedPreference> prepared = new ArrayList<>();
    for (Example e : definition.data().examples()) {
      prepared.add(Example.as(TokenizedPreference.class, e, "byo"));
    }
    Truncation truncation = new Truncation(MAX_LENGTH, Truncation.Mode.KEEP_START);
    ByoReport report = new ByoReport(bench, rows, MICRO_BATCH, chunkRows, quick);
    Device device = TinyLm.device();
    String torchDevice = device.isGpu() ? "cuda:" + device.getDeviceId() : "cpu";
    Tally bare = new Tally();
    Tally fill = new Tally();
    Tally eager = new Tally();
    try (UserModel user = UserModel.open(bench.modelDir(), UserModel.Runner.LOGPROB, truncation)) {
      int padId = Math.max(0, user.directory().padTokenId()); // as the runner pads
      long p0 = System.nanoTime();
      List<PaddedBatches.Micro> batches =
          PaddedBatches.of(prepared, truncation, padId, MICRO_BATCH);
      report.padS((System.nanoTime() - p0) / 1e9);
      BareLoop loop = new BareLoop(user.model(), rows);
      int threads = JniUtils.getNumThreads();
      report.jvmThreads(threads, JniUtils.getNumInteropThreads(), device.toString());
      EagerReference py = null;
      if (!python.usable()) {
        report.eagerLeftOut("no Python with torch and transformers: " + python.reason());
      } else {
        Path sequences = run.resolve("sequences.jsonl");
        PaddedBatches.writeSequences(prepared, truncation, sequences);
        System.out.printf(
            "(b) Python eager: loading, torch.set_num_threads(%d), warm-up%n", threads);
        try {
          py =
              EagerReference.start(
                  python,
                  bench.hfDir(),
                  sequences,
                  MICRO_BATCH,
                  chunkRows,
                  threads,
                  padId,
                  WARMUP_BATCHES,
                  bench.attention(),
                  torchDevice,
                  run.resolve("bench_eager.log"));
          report.eagerAbout(py);
        } catch (IOException e) {
          report.eagerLeftOut("scripts/bench_eager.py failed: " + e.getMessage());
        }
      }
      System.out.printf("(a) bare DJL loop: warm-up, libtorch %d threads on %s%n", threads, device);
      loop.warmUp(batches.subList(0, WARMUP_BATCHES));
      System.out.println("(T) TensorCache: starting the embedded node, warm-up fill");
      int perChunk = chunkRows / MICRO_BATCH;
      try (NodeFill node =
          NodeFill.start(definition, chunkRows, WARMUP_BATCHES * MICRO_BATCH, run)) {
        for (int k = 0; k < node.chunks(); k++) {
          for (int step = 0; step < 3; step++) {
            switch ((k + step) % 3) {
              case 0 ->
                  loop.run(batches.subList(k * perChunk, (k + 1) * perChunk), k * chunkRows, bare);
              case 1 -> node.fill(k, k * chunkRows, fill);
              default -> py = eagerChunk(py, eager, report);
            }
          }
          System.out.printf(
              "rows %d-%d: (T) %.2f, (a) %.2f, (b) %s examples/s%n",
              k * chunkRows,
              (k + 1) * chunkRows - 1,
              last(fill),
              last(bare),
              py == null ? "-" : String.format("%.2f", last(eager)));
        }
        report.jvm(bare, loop.values(), fill, node);
        if (py != null) {
          try {
            report.eager(eager, py.finish());
          } catch (IOException e) {
            report.eagerLeftOut("scripts/bench_eager.py failed: " + e.getMessage());
            py = null;
          }
        }
      } finally {
        if (py != null) {
          py.close();
        }
      }
      if (!quick && py != null) {
        try {
          report.otherAttention(
              otherAttention(python, bench, prepared, truncation, padId, threads, torchDevice, run),
              bench.attention().equals("sdpa") ? "eager" : "sdpa");
        } catch (IOException e) {
          System.out.println("(b') left out: " + e.getMessage());
        }
      }
    }
    report.printAndWrite(resultsDir);
  }

  /** Times the next chunk in Python; on failure says so and returns null (left out from then). */
  private static EagerReference eagerChunk(EagerReference py, Tally eager, ByoReport report) {
    if (py == null) {
      return null;
    }
    try {
      py.chunk(eager);
      return py;
    } catch (IOException e) {
      py.close();
      report.eagerLeftOut("scripts/bench_eager.py failed: " + e.getMessage());
      return null;
    }
  }

  /** The first rows with the attention the model was not traced with, for information. */
  private static Tally otherAttention(
      PythonEnv python,
      BenchModel bench,
      List<TokenizedPreference> prepared,
      Truncation truncation,
      int padId,
      int threads,
      String device,
      Path run)
      throws IOException, InterruptedException {
    int rows = Math.min(OTHER_ATTENTION_ROWS, prepared.size());
    String attention = bench.attention().equals("sdpa") ? "eager" : "sdpa";
    Path head = run.resolve("sequences-" + attention + ".jsonl");
    PaddedBatches.writeSequences(prepared.subList(0, rows), truncation, head);
    System.out.printf("(b') Python eager with %s attention, first %d rows%n", attention, rows);
    Tally t = new Tally();
    try (EagerReference py =
        EagerReference.start(
            python,
            bench.hfDir(),
            head,
            MICRO_BATCH,
            rows,
            threads,
            padId,
            WARMUP_BATCHES,
            attention,
            device,
            run.resolve("bench_eager_" + attention + ".log"))) {
      py.chunk(t);
      py.finish();
    }
    return t;
  }

  private static double last(Tally t) {
    List<Double> rates = t.chunkRates();
    return rates.isEmpty() ? Double.NaN : rates.get(rates.size() - 1);
  }
}
