package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.bench.fixture.Files2;

/**
 * The benchmark's seeded Qwen2 models and preference rows, made by {@code
 * scripts/make_bench_model.py} under the work directory once per seed and sizes and reused by later
 * runs; {@code info} is its {@code bench-model.json} (sizes, token lengths, versions).
 */
record BenchModel(Path dir, JsonNode info) {
  /** The models compared, in order. */
  static final List<String> MODELS = List.of("small", "wide");

  private static final String INFO = "bench-model.json";

  /**
   * The models of {@code size} under {@code workDir}, made with {@code python} when missing; null
   * when missing and not makeable (no usable Python), saying so.
   */
  static BenchModel obtain(PythonEnv python, Path workDir, ByoSize size)
      throws IOException, InterruptedException {
    String key =
        String.format(
            "bench-model-s%d-n%d-l%d-b%s-v%s",
            ByoSize.SEED,
            size.madeRows(),
            size.madeLongRows(),
            size.body() == null ? "default" : size.body().replace(',', 'x'),
            size.tokenizerVocab() == 0 ? "default" : Integer.toString(size.tokenizerVocab()));
    Path dir = workDir.resolve(key).toAbsolutePath();
    BenchModel cached = read(dir);
    if (cached != null) {
      System.out.println("bench models: reusing " + dir);
      return cached;
    }
    if (!python.usable()) {
      System.out.println(
          "left out: no bench models at "
              + dir
              + " and no Python to make them: "
              + python.reason());
      return null;
    }
    Files2.fresh(dir);
    Files.delete(dir); // the script makes it, and refuses a non-empty one
    Path script = scripts().resolve("make_bench_model.py");
    System.out.printf("bench models: making %s with %s (%s)%n", dir, script, python.executable());
    List<String> command = new ArrayList<>(List.of(python.executable(), script.toString()));
    command.addAll(List.of("--out", dir.toString(), "--seed", Long.toString(ByoSize.SEED)));
    command.addAll(List.of("--rows", Integer.toString(size.madeRows())));
    command.addAll(List.of("--long-rows", Integer.toString(size.madeLongRows())));
    if (size.body() != null) {
      command.addAll(List.of("--body", size.body()));
    }
    if (size.tokenizerVocab() > 0) {
      command.addAll(List.of("--tokenizer-vocab", Integer.toString(size.tokenizerVocab())));
    }
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

  /**
   * The repository's {@code scripts} directory: under the working directory (the launcher's) or the
   * nearest directory above it that has one (a module's, where its tests run).
   */
  static Path scripts() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      if (Files.isRegularFile(d.resolve("scripts").resolve("make_bench_model.py"))) {
        return d.resolve("scripts");
      }
    }
    throw new IllegalStateException(
        "no scripts/make_bench_model.py under "
            + Path.of("").toAbsolutePath()
            + " or above it: run the benchmark from the repository (./tensorcache bench)");
  }

  /** Model {@code name}'s entry: {@code parameters}, {@code vocab_size}, its directories. */
  JsonNode model(String name) {
    JsonNode m = info.path("models").path(name);
    if (m.isMissingNode()) {
      throw new IllegalArgumentException(
          "model '" + name + "' not in " + dir.resolve(INFO) + ", expected one of " + MODELS);
    }
    return m;
  }

  /**
   * A directory of model {@code name}: {@code hf_dir} (what TRL loads), {@code model_dir} (the
   * format-2 export the fill runs), {@code model_logits_dir} (the format-1 one of the bare loop).
   */
  Path path(String name, String key) {
    return dir.resolve(model(name).path(key).asText());
  }

  /** The first {@code rows} rows: the made file itself, or a copy of its head beside it. */
  Path dataset(int rows) throws IOException {
    return head(info.path("files").path("dataset").asText("prefs.jsonl"), rows);
  }

  /** The first {@code rows} long rows (1,500 to 2,048 tokens each). */
  Path longDataset(int rows) throws IOException {
    return head(info.path("files").path("long_dataset").asText("long.jsonl"), rows);
  }

  private Path head(String file, int rows) throws IOException {
    Path all = dir.resolve(file);
    List<String> lines = Files.readAllLines(all);
    if (rows == lines.size()) {
      return all;
    }
    if (rows > lines.size()) {
      throw new IllegalArgumentException(
          rows + " rows asked of " + all + ", which has " + lines.size());
    }
    String name = file.replaceFirst("\\.jsonl$", "");
    Path head = dir.resolve(name + "-" + rows + ".jsonl");
    if (!Files.exists(head) || !Files.readAllLines(head).equals(lines.subList(0, rows))) {
      Files.write(head, lines.subList(0, rows));
    }
    return head;
  }

  /** A line about model {@code name} for the table's heading. */
  String describe(String name) {
    JsonNode m = model(name);
    JsonNode t = info.path("sequence_tokens");
    return String.format(
        "%s %s of %.1f M parameters (hidden %d, %d layers, %d heads, %d key/value heads,"
            + " vocabulary %,d, %s attention); rows of %d to %d tokens (p50 %d, p90 %d)",
        name,
        m.path("architecture").asText(),
        m.path("parameters").asLong() / 1e6,
        info.path("hidden_size").asInt(),
        info.path("layers").asInt(),
        info.path("attention_heads").asInt(),
        info.path("key_value_heads").asInt(),
        m.path("vocab_size").asInt(),
        info.path("attn_implementation").asText(),
        t.path("min").asInt(),
        t.path("max").asInt(),
        t.path("p50").asInt(),
        t.path("p90").asInt());
  }
}
