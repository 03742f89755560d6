package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.tensorcache.model.runner.PaddedBatch;

/**
 * The Python reference: {@code scripts/bench_eager.py} on the Hugging Face model the traced one was
 * exported from, in PyTorch eager mode under {@code torch.no_grad()}, on the same cut and padded
 * sequences, with the JVM's number of libtorch threads. The process loads and warms up once, then
 * times one chunk of rows each time {@link #chunk} asks, so that its runs interleave with the
 * JVM's.
 */
final class EagerReference implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final BufferedReader out;
  private final Writer in;
  private final Path log;
  private final JsonNode about;

  private EagerReference(Process process, Path log) throws IOException {
    this.process = process;
    this.log = log;
    this.out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.about = next();
  }

  /**
   * Starts the script on {@code sequences} (see {@link PaddedBatches#writeSequences}) in chunks of
   * {@code chunkRows} rows and waits until it has loaded the model and run {@code warmup}
   * micro-batches; {@code device} is a torch device name ({@code cpu}, {@code cuda:0}).
   */
  static EagerReference start(
      PythonEnv python,
      Path hfDir,
      Path sequences,
      int microBatch,
      int chunkRows,
      int threads,
      int padId,
      int warmup,
      String attention,
      String device,
      Path log)
      throws IOException {
    List<String> args =
        List.of(
            "--hf-dir",
            hfDir.toString(),
            "--sequences",
            sequences.toString(),
            "--micro-batch",
            Integer.toString(microBatch),
            "--chunk-rows",
            Integer.toString(chunkRows),
            "--threads",
            Integer.toString(threads),
            "--pad-id",
            Integer.toString(padId),
            "--step-multiple",
            Integer.toString(PaddedBatch.STEP_MULTIPLE),
            "--warmup",
            Integer.toString(warmup),
            "--attn",
            attention,
            "--device",
            device,
            "--step");
    Process p = python.start(BenchModel.scripts().resolve("bench_eager.py"), args, log);
    try {
      return new EagerReference(p, log);
    } catch (IOException | RuntimeException e) {
      p.destroyForcibly();
      throw e;
    }
  }

  /** Times the next chunk of rows into {@code tally}. */
  void chunk(Tally tally) throws IOException {
    in.write("next\n");
    in.flush();
    JsonNode c = next();
    tally.add(
        c.path("rows").asInt(),
        c.path("seconds").asDouble(),
        Map.of(
            "forward_s", c.path("forward_s").asDouble(),
            "log_softmax_gather_sum_s", c.path("log_softmax_gather_s").asDouble(),
            "cpu_s", c.path("cpu_s").asDouble()));
  }

  /** Ends the run; returns the values {@code [chosen, rejected][row]} of the timed chunks. */
  float[][] finish() throws IOException, InterruptedException {
    in.close();
    JsonNode summary = next();
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IOException(
          "bench_eager.py did not end well (log " + log + "):\n" + PythonEnv.tail(log));
    }
    return new float[][] {
      floats(summary.path("chosen_logp")), floats(summary.path("rejected_logp"))
    };
  }

  /** torch's intra-op threads in the script. */
  int threads() {
    return about.path("threads").asInt();
  }

  /** torch's inter-op threads in the script. */
  int interopThreads() {
    return about.path("interop_threads").asInt();
  }

  /** The attention implementation the model was loaded with. */
  String attention() {
    return about.path("attn_implementation").asText();
  }

  /** torch's and transformers' versions. */
  String versions() {
    return "torch "
        + about.path("torch_version").asText()
        + ", transformers "
        + about.path("transformers_version").asText();
  }

  private JsonNode next() throws IOException {
    String line = out.readLine();
    if (line == null) {
      throw new IOException(
          "bench_eager.py ended early (log " + log + "):\n" + PythonEnv.tail(log));
    }
    try {
      return JSON.readTree(line);
    } catch (IOException e) {
      throw new IOException("bench_eager.py printed '" + line + "', expected a JSON line", e);
    }
  }

  private static float[] floats(JsonNode array) {
    float[] values = new float[array.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) array.get(i).asDouble();
    }
    return values;
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}
