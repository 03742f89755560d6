package org.tensorcache.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The embedded cluster next to its references in the same run: the fill next to a bare loop over
 * the runner, then {@link LookupBench} and {@link DpoBench} on the filled cache.
 */
final class ClusterBench {
  private static final int MICRO_BATCH = 64;
  private static final double FILL_TARGET = 0.95;

  /** Examples per second and CPU microseconds per example, every thread of the JVM. */
  private record Rate(double perS, double cpuUs) {}

  private ClusterBench() {}

  static Map<String, Object> run(Path work, RunSize size) throws Exception {
    int n = size.pick(20_000, 5_000, 512);
    Path dir = Files2.fresh(work.resolve("cluster"));
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 42, n);
    ExampleSet data = ExampleSet.load(dir.resolve("data.jsonl"));
    Path modelDir = dir.resolve("model");
    try (TinyLm lm = TinyLm.create(RunnerBench.DEMO_MODEL)) {
      lm.save(modelDir);
    }
    // the same cache under a second name: filled after the first on the same node, it shows the
    // fill on a warm JVM, as the bare loop is timed on a warm runner
    List<CacheDefinition> definitions = new ArrayList<>();
    for (String name : List.of("bench-ref", "bench-ref-again")) {
      try (ModelRunner runner = runner(modelDir)) {
        CacheSpec spec = new CacheSpec(name, n, runner.fields(), Math.min(n, 1024));
        var fp = CacheDefinition.fingerprint(runner, data, spec);
        definitions.add(
            new CacheDefinition(
                spec, fp, data, () -> runner(modelDir), dir.resolve(name), MICRO_BATCH));
      }
    }
    Rate bareBefore = bareLoop(modelDir, data, n);
    String cacheId = definitions.get(0).fingerprint().cacheId();
    Map<String, Object> out = new LinkedHashMap<>();
    try (EmbeddedNodes node = EmbeddedNodes.one(dir.resolve("node"), definitions, Map.of())) {
      // the fill is timed on a started node, as the bare loop is timed on a loaded runner: the
      // coordinator singleton's start (recovery from the journal) is reported apart
      double ready = node.awaitCoordinator(cacheId);
      System.out.printf("coordinator ready %.2f s after the node was Up%n", ready);
      out.put("coordinator_ready_s", Stats.round2(ready));
      List<Rate> fills = new ArrayList<>();
      for (CacheDefinition d : definitions) {
        EmbeddedNodes.Fill f = node.fill(d.cacheId(), Duration.ofMinutes(10));
        fills.add(new Rate(n / f.seconds(), f.cpuSeconds() * 1e6 / n));
      }
      // the bare loop before and after the fills: the machine's speed drifts within minutes
      Rate bareAfter = bareLoop(modelDir, data, n);
      double bare = (bareBefore.perS() + bareAfter.perS()) / 2;
      double bareCpuUs = (bareBefore.cpuUs() + bareAfter.cpuUs()) / 2;
      Table table =
          new Table("fill next to a bare runner loop (mean of before and after the fills)")
              .col("fill", "%-10s")
              .col("examples_per_s", "examples/s", "%10d")
              .col("cpu_us_per_example", "CPU us/example", "%14d")
              .col("ratio", "%6.2f")
              .col("ratio_target", "target", ">= %.2f")
              .row("bare loop", Math.round(bare), Math.round(bareCpuUs), null, null);
      for (int i = 0; i < fills.size(); i++) {
        Rate f = fills.get(i);
        String what = i == 0 ? "first" : "warm";
        table.row(what, Math.round(f.perS()), Math.round(f.cpuUs()), f.perS() / bare, FILL_TARGET);
      }
      List<Map<String, Object>> rows = table.print();
      System.out.println("  CPU: every thread of the JVM");
      out.put("bare_runner_examples_per_s", Math.round(bare));
      out.put(
          "bare_runner_before_after",
          List.of(Math.round(bareBefore.perS()), Math.round(bareAfter.perS())));
      out.put("bare_cpu_us_per_example", Math.round(bareCpuUs));
      out.put("first_fill", rows.get(1));
      out.put("warm_fill", rows.get(2));
      out.put("fill_ratio", rows.get(2).get("ratio"));
      out.put("lookup", LookupBench.run(node.client(0), cacheId, n, size));
      out.put("dpo", DpoBench.run(node.client(0), cacheId, data, modelDir, size));
    }
    return out;
  }

  /** A loop over the runner alone, on a warm runner. */
  private static Rate bareLoop(Path modelDir, ExampleSet data, int n) throws Exception {
    try (ModelRunner runner = runner(modelDir)) {
      runner.run(data.slice(0, MICRO_BATCH)); // warm-up, as the node's first batches are
      var cpu = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      long cpu0 = cpu.getProcessCpuTime();
      long t0 = System.nanoTime();
      for (long from = 0; from < n; from += MICRO_BATCH) {
        if (runner.run(data.slice(from, Math.min(n, from + MICRO_BATCH))).size() == 0) {
          throw new IllegalStateException("empty output");
        }
      }
      double perS = n / ((System.nanoTime() - t0) / 1e9);
      return new Rate(perS, (cpu.getProcessCpuTime() - cpu0) / 1e3 / n);
    }
  }

  private static ModelRunner runner(Path modelDir) {
    try {
      return new ReferenceLogprobRunner(TinyLm.load(modelDir), MICRO_BATCH, 512);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
