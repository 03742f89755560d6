package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;

/**
 * The benchmark's seeded Qwen2 models and preference rows, made by {@code
 * scripts/make_bench_model.py} under the work directory once per seed and sizes and reused by later
 * runs; {@code info} is its {@code bench-model.json} (sizes, token lengths, versions).
 */
public record BenchModel(Path dir, JsonNode info) {
  /** The models compared, in order. */
  static final List<String> MODELS = List.of("small", "wide");

  private static final long SEED = 20261123;

  /**
   * The models of a run of {@code size} under {@code workDir}, made with {@code python} when
   * missing; null when missing and not makeable, saying so. A smoke run's are tiny (hidden 32, a
   * 1,024-id tokenizer, 8 rows); the others' are the script's (hidden 256, 4 layers, 8,192 ids).
   */
  public static BenchModel obtain(PythonEnv python, Path workDir, RunSize size)
      throws IOException, InterruptedException {
    boolean smoke = size == RunSize.SMOKE;
    String rows = smoke ? "8" : "384";
    String longRows = smoke ? "1" : "8";
    String body = smoke ? "32x2x4x2x64-v1024" : "default-vdefault";
    String key = "bench-model-s%d-n%s-l%s-b%s".formatted(SEED, rows, longRows, body);
    Path dir = workDir.resolve(key).toAbsolutePath();
    Path info = dir.resolve("bench-model.json");
    if (Files.isRegularFile(info)) {
      System.out.println("bench models: reusing " + dir);
    } else if (!python.usable()) {
      System.out.printf(
          "left out: no bench models at %s and no Python: %s%n", dir, python.reason());
      return null;
    } else {
      Files.delete(Files2.fresh(dir)); // the script makes it, and refuses a non-empty one
      Path script = scripts().resolve("make_bench_model.py");
      System.out.printf("bench models: making %s with %s (%s)%n", dir, script, python.executable());
      List<String> args = new ArrayList<>(List.of("--out", dir.toString(), "--seed", "" + SEED));
      args.addAll(List.of("--rows", rows, "--long-rows", longRows));
      if (smoke) {
        args.addAll(List.of("--body", "32,2,4,2,64", "--tokenizer-vocab", "1024"));
      }
      List<String> command = python.command(script, args);
      int code = PythonEnv.exec(command, 1800);
      if (code != 0 || !Files.isRegularFile(info)) {
        throw new IOException(String.join(" ", command) + " exited " + code + " without models");
      }
    }
    return new BenchModel(dir, new ObjectMapper().readTree(info.toFile()));
  }

  /**
   * The repository's {@code scripts} directory: under the working directory (the launcher's) or the
   * nearest directory above it that has one (a module's, where its tests run).
   */
  public static Path scripts() {
    Path here = Path.of("").toAbsolutePath();
    for (Path d = here; d != null; d = d.getParent()) {
      if (Files.isRegularFile(d.resolve("scripts").resolve("make_bench_model.py"))) {
        return d.resolve("scripts");
      }
    }
    throw new IllegalStateException(
        "no scripts/make_bench_model.py under "
            + here
            + " or above it: run the benchmark from the"
            + " repository (./tensorcache bench)");
  }

  /** Model {@code name}'s entry: {@code parameters}, {@code vocab_size}, its directories. */
  JsonNode model(String name) {
    JsonNode m = info.path("models").path(name);
    if (m.isMissingNode()) {
      throw new IllegalArgumentException("model '" + name + "' not in " + dir);
    }
    return m;
  }

  /**
   * A directory of model {@code name}: {@code hf_dir} (what TRL loads), {@code model_dir} (the
   * format-2 export the fill runs), {@code model_logits_dir} (the format-1 one of the bare loop).
   */
  public Path path(String name, String key) {
    return dir.resolve(model(name).path(key).asText());
  }

  /** The first {@code rows} rows ({@code dataset}) or long rows of 1,500 to 2,048 tokens. */
  public Path rows(String file, int rows) throws IOException {
    Path all = dir.resolve(info.path("files").path(file).asText());
    List<String> lines = Files.readAllLines(all);
    if (rows == lines.size()) {
      return all;
    }
    Path head = dir.resolve(all.getFileName().toString().replace(".jsonl", "-" + rows + ".jsonl"));
    if (!Files.exists(head) || !Files.readAllLines(head).equals(lines.subList(0, rows))) {
      Files.write(head, lines.subList(0, rows));
    }
    return head;
  }

  /** A line about model {@code name} for the table's heading. */
  public String describe(String name) {
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
