package org.tensorcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.tensorcache.bench.byo.PythonEnv;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.testing.Reaper;

/**
 * Every benchmark part, run as a user runs it ({@code ./tensorcache bench --smoke --only PART}, a
 * few seconds each, figures that mean nothing), finishes and writes its results files with their
 * sections: a part that breaks fails the build rather than the next benchmark run. Nothing here
 * looks at a figure. Each run's output and files stay in {@code target/bench-smoke/PART}.
 */
class BenchSmokeTest {
  /**
   * What a part writes into the results directory.
   *
   * @param json its results file
   * @param keys what that file must hold; {@code a/b} is key {@code b} inside {@code a}
   * @param charts the PNG charts it writes beside it
   */
  record Expected(String json, List<String> keys, List<String> charts) {}

  private static final List<String> COMMON = List.of("benchmark", "when", "machine", "size");

  /** Each part with a smoke run, and what it writes. */
  static final Map<String, Expected> PARTS = new LinkedHashMap<>();

  static {
    PARTS.put("runner", expect("foundation.json", List.of("runner")));
    PARTS.put("segments", expect("foundation.json", List.of("segments")));
    PARTS.put(
        "cluster",
        expect(
            "cluster.json",
            List.of("cluster/first_fill", "cluster/warm_fill", "cluster/lookup", "cluster/dpo")));
    PARTS.put(
        "micro",
        expect(
            "micro.json",
            List.of("settings", "merge", "segments", "replies", "reply_serializers"),
            "micro-merge.png",
            "micro-segments.png",
            "micro-reply.png"));
    PARTS.put(
        "remote",
        expect("remote.json", List.of("examples", "rows", "targets_at_256"), "remote.png"));
    PARTS.put(
        "tiers",
        expect(
            "tiers.json",
            List.of(
                "config",
                "fill",
                "trainer_prefetch",
                "trainer_no_prefetch",
                "trainer_in_memory",
                "plain_array_same_batches",
                "random_lookups",
                "targets"),
            "tiers.png"));
    PARTS.put(
        "scale",
        expect(
            "scale.json",
            List.of("memory/after_fill", "memory/steady", "scaling", "targets"),
            "scale.png",
            "scale-fill.png",
            "memory.png"));
    PARTS.put(
        "security", expect("security.json", List.of("lookups", "fill", "targets"), "security.png"));
    PARTS.put("distill", expect("distill.json", List.of("storage", "fill")));
    PARTS.put("byo", expect("byo.json", List.of("rows", "threads", "method", "targets")));
    PARTS.put(
        "objects",
        expect(
            "objects.json",
            List.of(
                "objects/local_segment_write_ms_per_segment",
                "objects/object_segment_write_ms_per_segment",
                "objects/plain_put_same_bytes_ms_per_segment",
                "objects/object_segment_read_ms_per_segment")));
  }

  /**
   * What {@code byo} (TensorCache's fill next to TRL's own precompute, in Python) must also have
   * measured and written where Python with torch, transformers and TRL is there (as on CI): both
   * models' sides, the budget sweep, the values against TRL's, the memory check and the chart.
   */
  static final List<String> BYO_MEASURED =
      List.of(
          "models/small/medians/tensorcache/examples_per_s",
          "models/small/medians/trl_default/examples_per_s",
          "models/small/medians/trl_best/examples_per_s",
          "models/small/medians/bare_loop/examples_per_s",
          "models/small/token_budget_sweep/best_batch_tokens",
          "models/small/values/tensorcache_vs_trl/max_relative_diff",
          "models/wide/medians/tensorcache/peak_rss_mib",
          "models/wide/medians/trl_default/peak_rss_mib",
          "models/wide/values/tensorcache_vs_trl/max_relative_diff",
          "memory_check/peak_minus_after_load_mib");

  /** The parts without a smoke run yet. */
  static final Set<String> NOT_YET = Set.of();

  /** One part's whole run, start-up included: a stuck one is stopped and fails. */
  private static final Duration LIMIT = Duration.ofMinutes(3);

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Expected expect(String json, List<String> keys, String... charts) {
    List<String> all = new ArrayList<>(COMMON);
    all.addAll(keys);
    return new Expected(json, all, List.of(charts));
  }

  static List<String> parts() {
    return List.copyOf(PARTS.keySet());
  }

  @Test
  void everyPartHasASmokeRun() {
    Set<String> expected = new TreeSet<>(Parts.names());
    expected.removeAll(NOT_YET);
    assertEquals(expected, new TreeSet<>(PARTS.keySet()), "parts with a smoke run");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("parts")
  void partFinishesAndWritesItsResults(String part) throws Exception {
    if (part.equals("remote")) {
      assumeTrue(
          Part.onPath("redis-server"),
          "the remote part needs redis-server (Debian: apt-get install redis-server)");
    }
    Path dir = Files2.fresh(Path.of("target", "bench-smoke", part)).toAbsolutePath();
    Path results = dir.resolve("results");
    Path log = dir.resolve("output.log");
    int exit = launch(part, results, dir.resolve("work"), log);
    assertEquals(0, exit, () -> part + " failed:\n" + tail(log));

    Expected expected = PARTS.get(part);
    Path json = results.resolve(expected.json());
    assertTrue(Files.exists(json), () -> part + " wrote no " + json + ":\n" + tail(log));
    JsonNode root = JSON.readTree(json.toFile());
    for (String key : expected.keys()) {
      assertTrue(at(root, key) != null, () -> json + " holds no '" + key + "': " + root);
    }
    assertEquals("smoke", root.get("size").asText(), json + ": size");
    for (String chart : expected.charts()) {
      Path png = results.resolve(chart);
      assertTrue(Files.size(png) > 0, () -> part + " wrote an empty " + png);
    }
    if (part.equals("byo") && PythonEnv.existing(null).usable()) {
      for (String key : BYO_MEASURED) {
        assertTrue(at(root, key) != null, () -> json + " holds no '" + key + "':\n" + tail(log));
      }
      Path png = results.resolve("byo.png");
      assertTrue(Files.isRegularFile(png) && Files.size(png) > 0, "byo wrote no byo.png");
    }
  }

  /** Runs the launcher's smoke run of {@code part}; returns its exit code. */
  private static int launch(String part, Path results, Path work, Path log) throws Exception {
    List<String> command =
        List.of(
            Path.of("..", "tensorcache").toAbsolutePath().normalize().toString(),
            "bench",
            "--smoke",
            "--only",
            part,
            "--out",
            results.resolve("foundation.json").toString(),
            "--work",
            work.toString());
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.environment().put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    // figures do not count: C1 alone and one GC thread leave the 2 cores to the part's own work
    pb.environment().put("JAVA_OPTS", "-Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    Process p = Reaper.start(pb);
    if (!p.waitFor(LIMIT.toSeconds(), TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      fail(part + " still running after " + LIMIT + ", stopped:\n" + tail(log));
    }
    return p.exitValue();
  }

  /** The node at {@code path} ({@code a/b}: key b inside a), null where there is none. */
  private static JsonNode at(JsonNode root, String path) {
    JsonNode node = root;
    for (String key : path.split("/")) {
      node = node == null ? null : node.get(key);
    }
    return node;
  }

  /** The last lines of a part's output, for a failure's message. */
  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    } catch (IOException e) {
      return "(no output: " + e + ")";
    }
  }
}
