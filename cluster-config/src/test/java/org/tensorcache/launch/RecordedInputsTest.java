package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.RowsDigest;
import org.tensorcache.testing.Reaper;

/**
 * The inputs a fill records for a trainer to check: the rows' content digest equals the one
 * python/tensorcache/digests.py computes, a prepared file's header and the exporter's digests are
 * copied, and none of it changes a cache id.
 */
class RecordedInputsTest {
  private static final Path BYO = Path.of("../model-runner/src/test/resources/byo");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** rows_digest of byo/data/text.jsonl's rows, computed by python/tensorcache/digests.py. */
  private static final String TEXT_ROWS_SHA256 =
      "fe28c48eeebc04ab0ed6ebded3b6704fe9d1ed0a8a444c0f44c51cd792623eb9";

  @TempDir Path dir;

  private CacheDefinition llama(Path modelDir, String dataset, String... more) throws IOException {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--data-dir",
                dir.resolve("data").toString(),
                "--model-dir",
                modelDir.toString(),
                "--dataset",
                BYO.resolve(dataset).toString(),
                "--range-size",
                "4"));
    args.addAll(List.of(more));
    return JobDefinitions.definition(args.toArray(String[]::new));
  }

  @Test
  void textRowsOfAUserModelRecordTheirDigestAndTruncationAndKeepTheirCacheId() throws Exception {
    CacheDefinition d = llama(BYO.resolve("llama"), "data/text.jsonl", "--batch-tokens", "256");
    // the cache id this job had before inputs were recorded
    assertEquals("dpo-ref-1bcef00872f45f90", d.cacheId());
    Map<String, String> in = d.inputs();
    assertEquals(TEXT_ROWS_SHA256, in.get("rows_sha256"));
    assertEquals(pythonRowsDigest(BYO.resolve("data/text.jsonl")), in.get("rows_sha256"));
    assertEquals("1024", in.get("max_length"));
    assertEquals("keep_start", in.get("truncation_mode"));
    assertEquals("</s>", in.get("eos_token"));
    assertEquals("logprob", in.get("runner_kind"));
    assertEquals("causal-lm-logprob/2", in.get("runner"));
    assertEquals("text", in.get("data_format"));
    assertEquals("256", in.get("batch_tokens"));
    assertEquals(Long.toString(2L << 30), in.get("memory_bound"));
    assertEquals(d.cacheId(), in.get("cache_id"));
    assertEquals(d.fingerprint().hex(), in.get("fingerprint"));
    assertEquals("12", in.get("n"));
    assertEquals("4", in.get("range_size"));
    assertEquals("dpo-ref", in.get("cache_name"));
    assertEquals(BYO.resolve("llama").toString(), in.get("model_dir"));
    assertEquals(BYO.resolve("data/text.jsonl").toString(), in.get("dataset"));
    assertEquals(d.data().digest(), in.get("dataset_sha256"));
    assertEquals(sha256(BYO.resolve("llama/tokenizer.json")), in.get("tokenizer_sha256"));
    assertEquals("0.1.0", in.get("tensorcache_version"));
    // the fixture's exporter recorded no state digests and no template digest: left out
    for (String key :
        List.of("model_state_sha256", "tokenizer_state_sha256", "chat_template_sha256", "source")) {
      assertFalse(in.containsKey(key), key + " is not known, expected no value: " + in);
    }

    JsonNode manifest = JSON.readTree(dir.resolve("data/" + d.cacheId() + "/cache.json").toFile());
    assertEquals(d.cacheId(), manifest.get("cache_id").textValue());
    assertEquals(d.fingerprint().hex(), manifest.get("fingerprint").textValue());
    assertEquals(new TreeMap<>(in), JSON.convertValue(manifest.get("inputs"), TreeMap.class));

    CacheDefinition keepEnd =
        llama(
            BYO.resolve("llama"),
            "data/text.jsonl",
            "--max-length",
            "0",
            "--truncation-mode",
            "keep_end");
    assertEquals("0", keepEnd.inputs().get("max_length"));
    assertEquals("keep_end", keepEnd.inputs().get("truncation_mode"));
  }

  @Test
  void aPreparedFileAndTheExportersDigestsAreCopiedAndDecideNothing() throws Exception {
    CacheDefinition plain = llama(BYO.resolve("llama"), "data/conversational.llama.jsonl");
    assertEquals("dpo-ref-bb3c67c20b70a127", plain.cacheId());
    JsonNode header =
        JSON.readTree(Files.readAllLines(BYO.resolve("data/conversational.llama.jsonl")).get(0))
            .get("tensorcache");
    Map<String, String> in = plain.inputs();
    assertEquals("tokens", in.get("data_format"));
    assertEquals("conversational.jsonl", in.get("source"));
    assertEquals(header.get("source_sha256").textValue(), in.get("source_sha256"));
    assertEquals(header.get("chat_template_sha256").textValue(), in.get("chat_template_sha256"));
    assertFalse(in.containsKey("rows_sha256"), "the fixture's header has no rows digest");

    // the same rows with a header that has a rows digest, the model with the exporter's digests
    Path model = dir.resolve("llama");
    Files.createDirectories(model);
    for (String f : List.of("model.pt", "tokenizer.json", "tokenizer_config.json")) {
      Files.copy(BYO.resolve("llama").resolve(f), model.resolve(f));
    }
    ObjectNode info =
        (ObjectNode) JSON.readTree(BYO.resolve("llama/tensorcache-model.json").toFile());
    info.put("model_state_sha256", "ab".repeat(32));
    info.put("tokenizer_state_sha256", "cd".repeat(32));
    info.put("chat_template_sha256", "ef".repeat(32));
    JSON.writeValue(model.resolve("tensorcache-model.json").toFile(), info);
    List<String> lines = Files.readAllLines(BYO.resolve("data/conversational.llama.jsonl"));
    ((ObjectNode) header).put("rows_sha256", "12".repeat(32));
    lines.set(0, JSON.writeValueAsString(Map.of("tensorcache", header)));
    Path prepared = dir.resolve("prepared.jsonl");
    Files.write(prepared, lines);

    CacheDefinition recorded = llama(model, prepared.toAbsolutePath().toString());
    in = recorded.inputs();
    assertEquals("12".repeat(32), in.get("rows_sha256"));
    assertEquals("ab".repeat(32), in.get("model_state_sha256"));
    assertEquals("cd".repeat(32), in.get("tokenizer_state_sha256"));
    assertEquals(
        header.get("chat_template_sha256").textValue(),
        in.get("chat_template_sha256"),
        "the prepared file's template is the one its rows were made with");
    assertEquals(
        plain.fingerprint().hex(),
        llama(model, "data/conversational.llama.jsonl").fingerprint().hex(),
        "recorded digests in the model directory must not change the cache");
  }

  @Test
  void theBuiltInModelRecordsItsTextRows() throws Exception {
    CacheDefinition d =
        JobDefinitions.definition(
            "--data-dir",
            dir.toString(),
            "--examples",
            "100",
            "--range-size",
            "32",
            "--embed",
            "8",
            "--hidden",
            "8",
            "--micro-batch",
            "8");
    assertEquals("dpo-ref-a2808d35c4f6cc45", d.cacheId());
    Map<String, String> in = d.inputs();
    assertEquals("builtin", in.get("runner_kind"));
    assertEquals("text", in.get("data_format"));
    assertEquals(pythonRowsDigest(d.data().source()), in.get("rows_sha256"));
    for (String key : List.of("model_dir", "tokenizer_sha256", "max_length", "eos_token")) {
      assertFalse(in.containsKey(key), key + " does not apply to the built-in model: " + in);
    }
  }

  /**
   * A text row's {@code tools} and {@code chat_template_kwargs} are part of its digest, floats
   * included, as python/tensorcache/digests.py computes it over the lines and over the data set
   * {@code datasets} loads from them (TRL leaves both fields out of a text row's tokens).
   */
  @Test
  void textRowsWithToolsRecordTheDigestATrainerComputes() throws Exception {
    Path file = dir.resolve("tools.jsonl");
    Files.write(
        file,
        List.of(
            "{\"prompt\": \"Weather?\", \"chosen\": \" Sunny.\", \"rejected\": \" Rain.\","
                + " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\","
                + " \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\":"
                + " \"string\"}}, \"required\": [\"city\"]}, \"strict\": true, \"temperature\":"
                + " 0.25, \"max_calls\": 3}}]}",
            "{\"prompt\": \"Hi\", \"chosen\": \" Hello\", \"rejected\": \" Bye\"}",
            "{\"prompt\": \"Sum?\", \"chosen\": \" 4\", \"rejected\": \" 5\", \"tools\":"
                + " [{\"type\": \"function\", \"function\": {\"name\": \"add\", \"parameters\":"
                + " {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}},"
                + " \"required\": [\"a\", \"b\"]}, \"strict\": false, \"temperature\": 1.5,"
                + " \"max_calls\": 10}}], \"chat_template_kwargs\": {\"enable_thinking\": false}}"),
        StandardCharsets.UTF_8);
    CacheDefinition d =
        JobDefinitions.definition(
            "--data-dir", dir.resolve("data").toString(),
            "--dataset", file.toString(),
            "--range-size", "2",
            "--embed", "8",
            "--hidden", "8",
            "--micro-batch", "2");
    String recorded = d.inputs().get("rows_sha256");
    assertEquals(pythonRowsDigest(file), recorded);
    assertFalse(
        RowsDigest.ofPreferences(d.data().preferences()).equals(recorded),
        "the tools must be part of the digest");
    assertEquals(pythonDatasetsRowsDigest(file), recorded);
  }

  private static String sha256(Path file) throws Exception {
    byte[] digest =
        java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
    return java.util.HexFormat.of().formatHex(digest);
  }

  /** rows_digest of a JSONL file's rows, by python/tensorcache/digests.py itself. */
  private static String pythonRowsDigest(Path jsonl) throws Exception {
    return python(
        "with open(sys.argv[2], encoding='utf-8') as f:\n"
            + "    print(rows_digest(json.loads(l) for l in f if l.strip()))\n",
        jsonl);
  }

  /** rows_digest of the data set {@code datasets.load_dataset("json")} makes of a JSONL file. */
  private static String pythonDatasetsRowsDigest(Path jsonl) throws Exception {
    return python(
        "import datasets\n"
            + "datasets.disable_progress_bars()\n"
            + "ds = datasets.load_dataset('json', data_files=sys.argv[2], split='train',"
            + " cache_dir=sys.argv[3])\n"
            + "print(rows_digest(ds))\n",
        jsonl,
        jsonl.resolveSibling("hf-cache"));
  }

  private static String python(String body, Path... args) throws Exception {
    String script =
        "import json, sys\n"
            + "sys.path.insert(0, sys.argv[1])\n"
            + "from tensorcache.digests import rows_digest\n"
            + body;
    List<String> command = new java.util.ArrayList<>(List.of("python3", "-c", script, "../python"));
    for (Path a : args) {
      command.add(a.toString());
    }
    Process p;
    try {
      p = Reaper.start(new ProcessBuilder(command));
    } catch (IOException e) {
      if ("true".equals(System.getenv("CI"))) {
        fail("python3 is needed: " + e.getMessage());
      }
      Assumptions.assumeTrue(false, "python3 cannot be started: " + e.getMessage());
      return null;
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "python3 did not finish");
    if (p.exitValue() != 0
        && err.contains("No module named 'datasets'")
        && !"true".equals(System.getenv("CI"))) {
      Assumptions.assumeTrue(false, "the datasets package is not installed");
    }
    assertEquals(0, p.exitValue(), err);
    return out;
  }
}
