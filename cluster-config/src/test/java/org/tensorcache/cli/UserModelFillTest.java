package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentStore;
import picocli.CommandLine;

/**
 * A user's model through the command line: {@code fill --local} and a three-node cluster fill of
 * the same job give bit-identical values, and both equal TRL's reference log-probs; any change of
 * the inputs makes another cache; a bad row stores nothing.
 */
class UserModelFillTest {
  private static final Path BYO = Path.of("../model-runner/src/test/resources/byo");
  private static final String[] FIELDS = {
    "chosen_logp", "rejected_logp", "chosen_tokens", "rejected_tokens"
  };

  @TempDir Path dir;
  private final List<NodeLauncher.Node> nodes = new ArrayList<>();

  /** The job's options: the Llama fixture on its text rows, with {@code changes} (name, value). */
  private String[] job(String... changes) {
    Map<String, String> options = new java.util.LinkedHashMap<>();
    options.put("--data-dir", dir.resolve("data").toString());
    options.put("--model-dir", BYO.resolve("llama").toString());
    options.put("--dataset", BYO.resolve("data/text.jsonl").toString());
    options.put("--range-size", "4");
    options.put("--batch-tokens", "256");
    for (int i = 0; i < changes.length; i += 2) {
      options.put(changes[i], changes[i + 1]);
    }
    List<String> args = new ArrayList<>();
    options.forEach((k, v) -> args.addAll(List.of(k, v)));
    return args.toArray(String[]::new);
  }

  /** {@link #job} with the pairs of {@code first} then those of {@code more} (later ones win). */
  private String[] jobWith(Object... pairs) {
    List<String> flat = new ArrayList<>();
    for (Object p : pairs) {
      if (p instanceof String[] a) {
        flat.addAll(List.of(a));
      } else {
        flat.add((String) p);
      }
    }
    return job(flat.toArray(String[]::new));
  }

  private static String[] concat(String first, String[] rest) {
    String[] out = new String[rest.length + 1];
    out[0] = first;
    System.arraycopy(rest, 0, out, 1, rest.length);
    return out;
  }

  /** The job options of one case of TRL's fixture values. */
  private String[] caseJob(JsonNode c, int number, String... more) {
    String model = c.get("model").textValue();
    String format = c.get("format").textValue();
    String dataset =
        format.equals("conversational")
            ? "data/conversational." + model + ".jsonl"
            : c.get("dataset").textValue();
    JsonNode max = c.get("max_length");
    return jobWith(
        "--model-dir",
        BYO.resolve(model).toString(),
        "--dataset",
        BYO.resolve(dataset).toString(),
        "--format",
        format.equals("text") ? "text" : "tokens",
        "--max-length",
        max.isNull() ? "0" : max.asText(),
        "--truncation-mode",
        c.get("truncation_mode").textValue(),
        "--cache-name",
        "case" + number,
        more);
  }

  /** Every case of TRL's values and the encoder's features, through both paths. */
  @Test
  void localAndThreeNodeFillsAreBitIdenticalAndEqualTrlInEveryCase() throws Exception {
    JsonNode fixtures = new ObjectMapper().readTree(BYO.resolve("expected.json").toFile());
    List<JsonNode> cases = new ArrayList<>();
    List<String[]> jobs = new ArrayList<>();
    for (JsonNode c : fixtures.get("cases")) {
      cases.add(c);
      jobs.add(caseJob(c, cases.size()));
    }
    // the first case on the same model with its body and head traced apart
    cases.add(cases.get(0));
    jobs.add(
        caseJob(
            cases.get(0),
            cases.size(),
            "--model-dir",
            BYO.resolve(fixtures.get("split_dirs").get("llama").textValue()).toString()));
    // a 32,768-token vocabulary, skewed lengths: several groups and passes a range, and under 48
    // MiB
    // the head takes about 128 positions at a time, fewer than a pass of 256 tokens can have
    for (JsonNode c : fixtures.get("split_cases")) {
      cases.add(c);
      jobs.add(
          caseJob(
              c,
              cases.size(),
              "--range-size",
              "24",
              "--batch-tokens",
              "256",
              "--memory-bound",
              "48m"));
    }
    List<CacheDefinition> definitions = new ArrayList<>();
    List<float[][]> local = new ArrayList<>();
    for (int k = 0; k < cases.size(); k++) {
      String[] job = jobs.get(k);
      assertEquals(0, Main.commandLine().execute(concat("fill", concat("--local", job))));
      CacheDefinition definition = JobDefinitions.definition(job);
      definitions.add(definition);
      if (cases.get(k).get("model").textValue().equals("wide")) {
        var range = definition.data().slice(0, definition.spec().rangeSize());
        assertTrue(definition.planner().groups(range).size() >= 3, "groups of a wide range");
      }
      float[][] values = segmentValues(definition);
      local.add(values);
      JsonNode c = cases.get(k);
      for (JsonNode row : c.get("rows")) {
        int i = row.get("index").intValue();
        for (int f = 0; f < FIELDS.length; f++) {
          double expected = row.get(FIELDS[f]).doubleValue();
          String where = c.get("name").textValue() + " row " + i + " " + FIELDS[f];
          assertEquals(expected, values[f][i], 1e-4 * Math.max(1, Math.abs(expected)), where);
        }
      }
    }

    String[] embedding =
        job(
            "--model-dir",
            BYO.resolve("encoder").toString(),
            "--dataset",
            BYO.resolve("data/embedding.jsonl").toString(),
            "--runner",
            "embedding",
            "--cache-name",
            "features");
    assertEquals(0, Main.commandLine().execute(concat("fill", concat("--local", embedding))));
    CacheDefinition features = JobDefinitions.definition(embedding);
    definitions.add(features);
    float[][] featureValues = segmentValues(features);
    local.add(featureValues);
    JsonNode eager = new ObjectMapper().readTree(BYO.resolve("expected-embedding.json").toFile());
    int width = eager.get("hidden_size").intValue();
    for (JsonNode row : eager.get("rows")) {
      int i = row.get("index").intValue();
      for (int k = 0; k < width; k++) {
        double expected = row.get("embedding").get(k).doubleValue();
        assertEquals(
            expected,
            featureValues[0][i * width + k],
            1e-4 * Math.max(1, Math.abs(expected)),
            "embedding row " + i + " element " + k);
      }
    }

    for (int n = 0; n < 3; n++) {
      nodes.add(start(definitions));
    }
    for (NodeLauncher.Node node : nodes) {
      Cluster.get(node.system()).manager().tell(Join.create(address(nodes.get(0))));
    }
    for (NodeLauncher.Node node : nodes) {
      NodeLauncher.whenUp(node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    NodeLauncher.Node last = nodes.get(2);
    ActorTestKit kit = ActorTestKit.create(last.system());
    for (CacheDefinition definition : definitions) {
      TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
      acks.awaitAssert(
          Duration.ofSeconds(30),
          Duration.ofMillis(500),
          () -> {
            last.coordinator().tell(new Coordinator.StartFill(definition.cacheId(), acks.ref()));
            assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(5)));
            return null;
          });
    }
    for (int k = 0; k < definitions.size(); k++) {
      CacheDefinition definition = definitions.get(k);
      long[] all = new long[(int) definition.spec().n()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      for (NodeLauncher.Node node : nodes) {
        TensorCacheClient client = TensorCacheClient.create(node.system());
        Batch batch =
            kit.createTestProbe()
                .awaitAssert(
                    Duration.ofSeconds(60),
                    Duration.ofMillis(300),
                    () -> client.lookup(definition.cacheId(), all));
        var fields = definition.spec().fields();
        for (int f = 0; f < fields.size(); f++) {
          String name = fields.get(f).name();
          assertArrayEquals(
              local.get(k)[f],
              batch.asFloats(name),
              definition.cacheId() + " " + name + " bit for bit");
        }
      }
    }
  }

  /** What {@code cache-id} prints for {@code job}, checked to be one line. */
  private static String cacheId(String[] job) {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    java.io.PrintStream stdout = System.out;
    StringWriter err = new StringWriter();
    int code;
    try (java.io.PrintStream capture = new java.io.PrintStream(bytes, true)) {
      System.setOut(capture);
      code = Main.commandLine().setErr(new PrintWriter(err)).execute(concat("cache-id", job));
    } finally {
      System.setOut(stdout);
    }
    assertEquals(0, code, err.toString());
    String out = bytes.toString();
    assertEquals(1, out.lines().count(), out);
    return out.trim();
  }

  @Test
  void cacheIdGivesTheIdOfTheLoadedModelWithoutLoadingItOrWritingAnything() throws Exception {
    String[] embedding =
        job(
            "--model-dir",
            BYO.resolve("encoder").toString(),
            "--dataset",
            BYO.resolve("data/embedding.jsonl").toString(),
            "--runner",
            "embedding",
            "--dtype",
            "F16");
    List<String[]> jobs =
        List.of(
            job(),
            job("--max-length", "24", "--truncation-mode", "keep_end"),
            job("--model-dir", BYO.resolve("llama-split").toString()),
            job("--dataset", BYO.resolve("data/tokens.jsonl").toString()),
            embedding);
    List<String> ids = new ArrayList<>();
    for (String[] j : jobs) {
      ids.add(cacheId(j));
    }
    assertFalse(Files.exists(dir.resolve("data")), "cache-id writes nothing");
    for (int k = 0; k < jobs.size(); k++) {
      // prepared as a fill prepares it: the model loaded, its runner checked against the files
      assertEquals(JobDefinitions.definition(jobs.get(k)).cacheId(), ids.get(k), "job " + k);
    }
  }

  @Test
  void everyInputThatDecidesTheValuesMakesAnotherCache() throws Exception {
    String base = JobDefinitions.definition(job()).cacheId();
    assertEquals(base, JobDefinitions.definition(job()).cacheId(), "same inputs, same cache");
    String gz =
        JobDefinitions.definition(job("--dataset", BYO.resolve("data/text.jsonl.gz").toString()))
            .cacheId();
    assertEquals(base, gz, "the gzip of the same rows is the same cache");
    List<String[]> changes =
        List.of(
            job("--max-length", "24"),
            job("--max-length", "24", "--truncation-mode", "keep_end"),
            job("--model-dir", BYO.resolve("gpt2").toString()),
            job("--model-dir", BYO.resolve("llama-split").toString()),
            job("--batch-tokens", "2048"),
            job("--memory-bound", "1g"),
            job("--dataset", BYO.resolve("data/tokens.jsonl").toString()));
    for (String[] change : changes) {
      assertNotEquals(base, JobDefinitions.definition(change).cacheId(), String.join(" ", change));
    }
    Path manifest = dir.resolve("data").resolve(base).resolve("cache.json");
    JsonNode m = new ObjectMapper().readTree(manifest.toFile());
    assertEquals(64, m.get("weights_sha256").textValue().length());
    assertEquals(64, m.get("parameters").get("tokenizer_sha256").textValue().length());
    assertEquals("1024/keep_start", m.get("parameters").get("truncation").textValue());
  }

  @Test
  void aBadRowIsOneLineNamingFileRowAndFieldAndNothingIsStored() throws Exception {
    Path data = dir.resolve("bad.jsonl");
    Files.writeString(
        data,
        "{\"prompt_ids\":[1,5],\"chosen_ids\":[7],\"rejected_ids\":[8]}\n"
            + "{\"prompt_ids\":[1,5],\"chosen_ids\":[7, 9999],\"rejected_ids\":[8]}\n");
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine()
            .setErr(new PrintWriter(err))
            .execute(concat("fill", concat("--local", job("--dataset", data.toString()))));
    assertEquals(1, code);
    assertEquals(
        "tensorcache fill: "
            + data
            + " row 1: field 'chosen_ids' token 1 is id 9999, outside the model's vocabulary"
            + " [0, 800)\n",
        err.toString());
    assertFalse(Files.exists(dir.resolve("data")), "nothing may be made for a bad data set");
  }

  @Test
  void aRowOverTheMemoryBoundIsRefusedBeforeAnyComputeAndNothingIsStored() throws Exception {
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine()
            .setErr(new PrintWriter(err))
            .execute(concat("fill", concat("--local", job("--memory-bound", "3m"))));
    assertEquals(1, code);
    assertTrue(
        err.toString()
            .matches(
                "(?s)tensorcache fill: \\S+text.jsonl row \\d+: a sequence of \\d+ tokens .*more"
                    + " than the memory bound of 3 MiB: raise --memory-bound .*"),
        err.toString());
    assertFalse(Files.exists(dir.resolve("data")), "nothing may be made for a refused row");
    StringWriter refused = new StringWriter();
    assertEquals(
        1,
        Main.commandLine()
            .setErr(new PrintWriter(refused))
            .execute(concat("fill", concat("--local", job("--micro-batch", "2")))));
    assertTrue(refused.toString().contains("--micro-batch 2 is the built-in model's"));
  }

  @Test
  void helpListsTheModelOptionsAndStartsNothing() {
    StringWriter out = new StringWriter();
    CommandLine cli = Main.commandLine().setOut(new PrintWriter(out));
    assertEquals(0, cli.execute(concat("fill", concat("--help", job()))));
    for (String option :
        List.of(
            "--model-dir",
            "--format",
            "--max-length",
            "--truncation-mode",
            "--runner",
            "--batch-tokens",
            "--memory-bound")) {
      assertTrue(out.toString().contains(option), option);
    }
    assertFalse(Files.exists(dir.resolve("data")), "--help must not prepare the job");
  }

  /**
   * Every field of every example as the segments hold them, as floats: {@code [field][index *
   * width]}.
   */
  private float[][] segmentValues(CacheDefinition definition) throws Exception {
    var spec = definition.spec();
    SegmentStore<Block> store =
        SegmentStore.open(definition.segmentDir(), spec, definition.fingerprint());
    int fields = spec.fields().size();
    float[][] values = new float[fields][];
    for (int f = 0; f < fields; f++) {
      values[f] = new float[(int) spec.n() * spec.fields().get(f).width()];
    }
    for (int r = 0; r < spec.rangeCount(); r++) {
      Block block = store.read(r).orElseThrow();
      assertTrue(block.isComplete());
      for (long i = block.start(); i < block.start() + block.length(); i++) {
        for (int f = 0; f < fields; f++) {
          var field = spec.fields().get(f);
          Object row = field.dtype().newArray(field.width());
          block.copyValues(f, i, row, 0); // token counts are I32: exact as floats
          for (int k = 0; k < field.width(); k++) {
            values[f][(int) i * field.width() + k] =
                org.tensorcache.fields.FieldArrays.asFloat(field.dtype(), row, k);
          }
        }
      }
    }
    return values;
  }

  private NodeLauncher.Node start(List<CacheDefinition> definitions) throws Exception {
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides("127.0.0.1", 0, List.of(), List.of()));
    overrides.put("pekko.cluster.seed-nodes", List.of());
    overrides.put("pekko.cluster.roles", List.of("compute", "lookup"));
    overrides.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.put("pekko.cluster.distributed-data.gossip-interval", "500ms");
    overrides.put("tensorcache.coordinator.tick", "300ms");
    overrides.put("pekko.loglevel", "WARNING");
    Config config = NodeLauncher.config(List.of("cluster", "h2"), overrides, dir.resolve("node"));
    return NodeLauncher.start(config, definitions);
  }

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).system().terminate();
      try {
        nodes.get(i).system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        // the next node is stopped all the same
      }
    }
    nodes.clear();
  }

  private static org.apache.pekko.actor.Address address(NodeLauncher.Node node) {
    return Cluster.get(node.system()).selfMember().address();
  }
}
