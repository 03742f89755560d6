package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.RunnerOutput;

/**
 * Fill throughput and lookup latency as the cache grows (one node, N = 10 thousand, 1 million, 10
 * million) and as nodes are added (1, 2, 3 nodes in this JVM at N = 1 million), with the synthetic
 * runner alone and a plain {@code float[]} gather as the references in the same run.
 */
final class ScalingBench {
  private ScalingBench() {}

  static List<Map<String, Object>> run(Path work, RunSize size) throws Exception {
    int[] sizes =
        size.pick(
            new int[] {10_000, 1_000_000, 10_000_000},
            new int[] {10_000, 1_000_000},
            new int[] {10_000});
    int[] nodeCounts = size.pick(new int[] {2, 3}, new int[] {2}, new int[] {2});
    // N of the cases with several nodes
    int nodesN = size.pick(1_000_000, 1_000_000, 20_000);
    int rounds = size.pick(20_000, 12_000, 100);
    // the runner alone, once: what a fill would reach if the cache cost nothing
    double runner = runnerAlone(LazyPreferences.dataset("runner-alone", nodesN));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int n : sizes) {
      rows.add(one(work, n, 1, rounds, runner));
    }
    for (int nodes : nodeCounts) {
      rows.add(one(work, nodesN, nodes, rounds, runner));
    }
    return rows;
  }

  /** One cluster of {@code nodes} nodes, one cache of {@code n} examples: fill, then lookups. */
  private static Map<String, Object> one(
      Path work, int n, int nodes, int rounds, double runnerAlone) throws Exception {
    String name = "scale-n" + n + "-k" + nodes;
    Path dir = org.tensorcache.bench.fixture.Files2.fresh(work.resolve(name));
    CacheDefinition def = ScaleCaches.definition(dir, name, n);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("case", (nodes == 1 ? "" : nodes + " nodes, ") + "N=" + ScaleTable.count(n));
    row.put("examples", n);
    row.put("nodes", nodes);
    row.put("ranges", def.spec().rangeCount());
    long t0 = System.nanoTime();
    try (EmbeddedNodes cluster =
        EmbeddedNodes.start(dir.resolve("node"), List.of(def), nodes, Map.of(), List.of("local"))) {
      row.put("start_s", Stats.round2((System.nanoTime() - t0) / 1e9));
      EmbeddedNodes.Fill timed = cluster.fill(def.cacheId(), Duration.ofMinutes(30));
      double fill = timed.seconds();
      row.put("fill_s", Stats.round2(fill));
      row.put("status_timeouts", timed.statusTimeouts());
      row.put("fill_examples_per_s", Math.round(n / fill));
      row.put("runner_alone_examples_per_s", Math.round(runnerAlone));
      row.put("computed_per_node", cluster.computedExamples());
      long t1 = System.nanoTime();
      cluster.awaitReplica(0, def.cacheId(), Duration.ofMinutes(5));
      row.put("replica_wait_s", Stats.round2((System.nanoTime() - t1) / 1e9));
      TensorCacheClient client = TensorCacheClient.create(cluster.system(0));
      // enough calls for the JIT to compile the whole lookup path, not only its loops
      row.put("lookup", ScaleLookup.run(client, def.cacheId(), n, rounds));
    }
    row.put("total_s", Stats.round2((System.nanoTime() - t0) / 1e9));
    System.out.println("  " + ScaleTable.scalingLine(row));
    return row;
  }

  /** The synthetic runner over every example of {@code data} in micro-batches, without a cache. */
  private static double runnerAlone(ExampleSet data) {
    SyntheticRunner runner = new SyntheticRunner(ScaleCaches.SEED);
    int mb = ScaleCaches.MICRO_BATCH;
    int count = data.size();
    for (int from = 0; from < count; from += mb) { // warm-up: one pass
      runner.run(data.slice(from, Math.min(count, from + mb)));
    }
    long t0 = System.nanoTime();
    long sink = 0;
    for (int from = 0; from < count; from += mb) {
      RunnerOutput out = runner.run(data.slice(from, Math.min(count, from + mb)));
      sink += out.size();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (sink != count) {
      throw new IllegalStateException("runner returned " + sink + " rows of " + count);
    }
    return count / seconds;
  }
}
