package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.tensorcache.bench.fixture.Files2;

/**
 * The benchmark's seeded Llama and preference data set, made once by {@code
 * scripts/make_bench_model.py} under the work directory and reused by later runs: the exported
 * model directory, the Hugging Face directory it was exported from, and the data set.
 *
 * @param dir where it was made
 * @param info {@code bench-model.json}: sizes, token lengths, versions
 */
public record BenchModel(Path dir, JsonNode info) {
  private static final String INFO = "bench-model.json";

  /**
   * The model of {@code seed} with {@code rows} rows under {@code workDir}, made with {@code
   * python} when missing; null when it is missing and cannot be made (no usable Python), saying so.
   */
  public static BenchModel obtain(PythonEnv python, Path workDir, int rows, long seed)
      throws IOException, InterruptedException {
    Path dir = workDir.resolve("bench-model-s" + seed + "-n" + rows + "-sdpa").toAbsolutePath();
    BenchModel cached = read(dir);
    if (cached != null) {
      System.out.println("bench model: reusing " + dir);
      return cached;
    }
    if (!python.usable()) {
      System.out.println(
          "left out: no bench model at " + dir + " and no Python to make it: " + python.reason());
      return null;
    }
    Files2.fresh(dir);
    Files.delete(dir); // the script makes it, and refuses a non-empty one
    Path script = scripts().resolve("make_bench_model.py");
    System.out.printf("bench model: making %s with %s (%s)%n", dir, script, python.executable());
    List<String> command =
        List.of(
            python.executable(),
            script.toString(),
            "--out",
            dir.toString(),
            "--rows",
            Integer.toString(rows),
            "--seed",
            Long.toString(seed));
    int code = PythonEnv.exec(command, 1800);
    BenchModel made = read(dir);
    if (code != 0 || made == null) {
      throw new IOException(String.join(" ", command) + " exited " + code + " without " + INFO);
    }
    return made;
  }

  private static BenchModel read(Path dir) throws IOException {
    Path info = dir.resolve(INFO);
    return Files.isRegularFile(info)
        ? new BenchModel(dir, new ObjectMapper().readTree(info.toFile()))
        : null;
  }

  /** The repository's {@code scripts} directory, from the working directory (the launcher's). */
  static Path scripts() {
    Path dir = Path.of("scripts").toAbsolutePath();
    if (!Files.isRegularFile(dir.resolve("make_bench_model.py"))) {
      throw new IllegalStateException(
          "no scripts/make_bench_model.py under "
              + Path.of("").toAbsolutePath()
              + ": run the benchmark from the repository's root (./tensorcache bench)");
    }
    return dir;
  }

  /** The exported model directory (model.pt, tokenizer.json). */
  public Path modelDir() {
    return dir.resolve(info.path("files").path("model_dir").asText("model"));
  }

  /** The Hugging Face model directory the Python reference loads. */
  public Path hfDir() {
    return dir.resolve(info.path("files").path("hf_dir").asText("hf"));
  }

  /**
   * The data set of the first {@code rows} rows: the made file itself, or a copy of its head beside
   * it.
   */
  public Path dataset(int rows) throws IOException {
    Path all = dir.resolve(info.path("files").path("dataset").asText("prefs.jsonl"));
    if (rows == info.path("rows").asInt()) {
      return all;
    }
    List<String> lines = Files.readAllLines(all);
    if (rows > lines.size()) {
      throw new IllegalArgumentException(
          rows + " rows asked of " + all + ", which has " + lines.size());
    }
    Path head = dir.resolve("prefs-" + rows + ".jsonl");
    if (!Files.exists(head) || !Files.readAllLines(head).equals(lines.subList(0, rows))) {
      Files.write(head, lines.subList(0, rows));
    }
    return head;
  }

  /** A line about the model and data for the table's heading. */
  public String describe() {
    JsonNode t = info.path("sequence_tokens");
    return String.format(
        "%s of %.1f M parameters (hidden %d, %d layers, %d heads, %d key/value heads, vocabulary"
            + " %d, %s attention), sequences of %d to %d tokens (mean %.0f)",
        info.path("architecture").asText(),
        info.path("parameters").asLong() / 1e6,
        info.path("hidden_size").asInt(),
        info.path("layers").asInt(),
        info.path("attention_heads").asInt(),
        info.path("key_value_heads").asInt(),
        info.path("vocab_size").asInt(),
        info.path("attn_implementation").asText(),
        t.path("min").asInt(),
        t.path("max").asInt(),
        t.path("mean").asDouble());
  }

  /** The attention implementation the model was made and traced with. */
  String attention() {
    return info.path("attn_implementation").asText("eager");
  }
}
