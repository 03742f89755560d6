package org.tensorcache.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The embedded cluster next to its references, each in the same run: fill throughput next to a bare
 * loop over the runner, lookups from the near replica next to a gather from plain arrays, and a DPO
 * step with cached reference log-probs next to one that computes them.
 */
final class ClusterBench {
  private static final int MICRO_BATCH = 64;

  private ClusterBench() {}

  static Map<String, Object> run(Path work, RunSize size) throws Exception {
    int n = size.pick(20_000, 5_000, 512);
    Path dir = Files2.fresh(work.resolve("cluster"));
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 42, n);
    ExampleSet data = ExampleSet.load(dir.resolve("data.jsonl"));
    Path modelDir = dir.resolve("model");
    try (TinyLm lm = TinyLm.create(new LmConfig(ByteTokenizer.VOCAB_SIZE, 64, 128, 2, 7))) {
      lm.save(modelDir);
    }
    Map<String, Object> out = new LinkedHashMap<>();

    CacheSpec spec;
    Fingerprint fp;
    try (ModelRunner runner = runner(modelDir)) {
      spec = new CacheSpec("bench-ref", n, runner.fields(), Math.min(n, 1024));
      fp = CacheDefinition.fingerprint(runner, data, spec);
    }
    double[] bareBefore = bareLoop(modelDir, data, n);
    // the same cache under a second name: filled after the first on the same node, it shows the
    // fill on a warm JVM, as the bare loop is timed on a warm runner
    CacheSpec again = new CacheSpec("bench-ref-again", n, spec.fields(), spec.rangeSize());
    Fingerprint fpAgain;
    try (ModelRunner runner = runner(modelDir)) {
      fpAgain = CacheDefinition.fingerprint(runner, data, again);
    }
    List<CacheDefinition> definitions =
        List.of(
            new CacheDefinition(
                spec, fp, data, () -> runner(modelDir), dir.resolve("segments"), MICRO_BATCH),
            new CacheDefinition(
                again, fpAgain, data, () -> runner(modelDir), dir.resolve("again"), MICRO_BATCH));
    NodeLauncher.Node node =
        NodeLauncher.startLocal(dir.resolve("node"), definitions, Duration.ofMinutes(2));
    try {
      // the fill is timed on a started node, as the bare loop is timed on a loaded runner: the
      // coordinator singleton's start (recovery from the journal) is reported apart
      long ready0 = System.nanoTime();
      ClusterFill.status(node.system(), node.coordinator(), fp.cacheId());
      double ready = (System.nanoTime() - ready0) / 1e9;
      System.out.printf("coordinator ready %.2f s after the node was Up%n", ready);
      out.put("coordinator_ready_s", Math.round(ready * 100) / 100.0);
      Map<String, Object> first = fill(node, fp.cacheId(), n);
      Map<String, Object> second = fill(node, fpAgain.cacheId(), n);
      // the bare loop before and after the fills: the machine's speed drifts within minutes
      double[] bareAfter = bareLoop(modelDir, data, n);
      double bare = (bareBefore[0] + bareAfter[0]) / 2;
      double bareCpuUs = (bareBefore[1] + bareAfter[1]) / 2;
      out.put("bare_runner_examples_per_s", Math.round(bare));
      out.put(
          "bare_runner_before_after", List.of(Math.round(bareBefore[0]), Math.round(bareAfter[0])));
      out.put("bare_cpu_us_per_example", Math.round(bareCpuUs));
      report(first, bare, bareCpuUs, "first fill");
      report(second, bare, bareCpuUs, "warm fill");
      out.put("first_fill", first);
      out.put("warm_fill", second);
      out.put("fill_ratio", second.get("ratio"));

      TensorCacheClient client = TensorCacheClient.create(node.system());
      out.put("lookup", LookupBench.run(client, fp.cacheId(), n, size));
      out.put("dpo", DpoBench.run(client, fp.cacheId(), data, modelDir, size));
    } finally {
      NodeLauncher.stop(node.system());
    }
    return out;
  }

  /** Examples/s and CPU us per example of a loop over the runner alone, on a warm runner. */
  private static double[] bareLoop(Path modelDir, ExampleSet data, int n) {
    var cpu =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    try (ModelRunner runner = runner(modelDir)) {
      runner.run(data.slice(0, MICRO_BATCH)); // warm-up, as the node's first batches are
      long cpu0 = cpu.getProcessCpuTime();
      long t0 = System.nanoTime();
      for (long from = 0; from < n; from += MICRO_BATCH) {
        RunnerOutput o = runner.run(data.slice(from, Math.min(n, from + MICRO_BATCH)));
        if (o.size() == 0) {
          throw new IllegalStateException("empty output");
        }
      }
      double rate = n / ((System.nanoTime() - t0) / 1e9);
      return new double[] {rate, (cpu.getProcessCpuTime() - cpu0) / 1e3 / n};
    }
  }

  /** Fills {@code cacheId}; returns its rate and CPU per example. */
  private static Map<String, Object> fill(NodeLauncher.Node node, String cacheId, int n)
      throws Exception {
    var cpu =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = cpu.getProcessCpuTime();
    long t0 = System.nanoTime();
    ClusterFill.run(node.system(), node.coordinator(), cacheId, false);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("examples_per_s", Math.round(n / ((System.nanoTime() - t0) / 1e9)));
    out.put("cpu_us_per_example", Math.round((cpu.getProcessCpuTime() - cpu0) / 1e3 / n));
    return out;
  }

  /** Prints a fill next to the bare loop and adds the ratio to it. */
  private static void report(Map<String, Object> fill, double bare, double bareCpuUs, String what) {
    double rate = ((Number) fill.get("examples_per_s")).doubleValue();
    fill.put("ratio", Math.round(rate / bare * 100) / 100.0);
    System.out.printf(
        "%s: node %.0f examples/s, bare runner loop %.0f examples/s (mean of before and after),"
            + " ratio %.2f (target >= 0.95); CPU per example %s us, bare loop %.0f us (every"
            + " thread of the JVM)%n",
        what, rate, bare, rate / bare, fill.get("cpu_us_per_example"), bareCpuUs);
  }

  static ModelRunner runner(Path modelDir) {
    try {
      return new ReferenceLogprobRunner(TinyLm.load(modelDir), MICRO_BATCH, 512);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The examples of {@code indices}. */
  static List<PreferenceExample> examples(ExampleSet data, long[] indices) {
    List<PreferenceExample> batch = new ArrayList<>(indices.length);
    for (long i : indices) {
      batch.add(Example.as(PreferenceExample.class, data.get(i), "dpo"));
    }
    return batch;
  }
}
