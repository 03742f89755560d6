package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.report.Table;
import org.tensorcache.bench.tiers.Timings;
import org.tensorcache.model.data.ExampleSet;

/**
 * Fill throughput and B=256 lookup latency as the cache grows (one node, N = 10 thousand, 1
 * million, 10 million) and as nodes are added (2 and 3 in this JVM at N = 1 million), next to the
 * synthetic runner alone and a plain {@code float[]} gather in the same run; every value looked up
 * checked.
 */
final class ScalingBench {
  static final int BATCH = 256;

  private ScalingBench() {}

  /** Runs every case; returns their table (rows as the results file holds them). */
  static Table run(Path work, RunSize size) throws Exception {
    int[] sizes =
        size.pick(
            new int[] {10_000, 1_000_000, 10_000_000},
            new int[] {10_000, 1_000_000},
            new int[] {10_000});
    int[] nodeCounts = size.pick(new int[] {2, 3}, new int[] {2}, new int[] {2});
    int nodesN = size.pick(1_000_000, 1_000_000, 20_000); // N of the cases with several nodes
    // enough calls for the JIT to compile the whole lookup path, not only its loops
    int rounds = size.pick(20_000, 12_000, 100);
    // the runner alone, once: what a fill would reach if the cache cost nothing
    long runner = Math.round(runnerAlone(ScaleCaches.dataset("runner-alone", nodesN)));
    Table t =
        new Table(null)
            .col("case", "%-16s")
            .json("examples")
            .json("nodes")
            .json("ranges")
            .json("start_s")
            .json("fill_s")
            .json("status_timeouts")
            .col("fill_examples_per_s", "   fill ex/s", "%,12d") // padded: see ScaleBench
            .col("runner_alone_examples_per_s", " runner ex/s", "%,12d")
            .json("computed_per_node")
            .json("replica_wait_s")
            .json("lookup/batch")
            .json("lookup/rounds")
            .col("lookup/cache_p50_us", "p50 us", "%9.2f")
            .col("lookup/cache_p99_us", "p99 us", "%9.2f")
            .col("lookup/into_p50_us", "into p50", "%9.2f")
            .json("lookup/into_p99_us")
            .col("lookup/array_p50_us", "arr p50", "%9.2f")
            .col("lookup/array_p99_us", "arr p99", "%9.2f")
            .col("lookup/p50_ratio", "ratio", "%6.2f")
            .json("lookup/values_checked")
            .col("lookup/values_wrong", "wrong", "%6d")
            .json("total_s");
    for (int i = 0; i < sizes.length + nodeCounts.length; i++) {
      boolean one = i < sizes.length;
      one(t, work, one ? sizes[i] : nodesN, one ? 1 : nodeCounts[i - sizes.length], rounds, runner);
    }
    return t;
  }

  /** One cluster of {@code nodes} nodes, one cache of {@code n} examples: fill, then lookups. */
  private static void one(Table t, Path work, int n, int nodes, int rounds, long runner)
      throws Exception {
    String name = "scale-n" + n + "-k" + nodes;
    Path dir = Files2.fresh(work.resolve(name));
    CacheDefinition def = ScaleCaches.definition(dir, name, n);
    String label = (nodes == 1 ? "" : nodes + " nodes, ") + "N=" + ScaleBench.count(n);
    long t0 = System.nanoTime();
    try (EmbeddedNodes cluster =
        EmbeddedNodes.start(dir.resolve("node"), List.of(def), nodes, Map.of(), List.of("local"))) {
      double start = (System.nanoTime() - t0) / 1e9;
      EmbeddedNodes.Fill fill = cluster.fill(def.cacheId(), Duration.ofMinutes(30));
      long t1 = System.nanoTime();
      cluster.awaitReplica(0, def.cacheId(), Duration.ofMinutes(5));
      double replica = (System.nanoTime() - t1) / 1e9;
      long[] wrong = {0};
      Timings[] l =
          lookups(TensorCacheClient.create(cluster.system(0)), def.cacheId(), n, rounds, wrong);
      t.row(
          label,
          n,
          nodes,
          def.spec().rangeCount(),
          start,
          fill.seconds(),
          fill.statusTimeouts(),
          Math.round(n / fill.seconds()),
          runner,
          cluster.computedExamples(),
          replica,
          BATCH,
          rounds,
          l[0].p50Us(),
          l[0].p99Us(),
          l[2].p50Us(),
          l[2].p99Us(),
          l[1].p50Us(),
          l[1].p99Us(),
          l[0].p50Us() / Math.max(1e-3, l[1].p50Us()),
          (long) (rounds + rounds / 4) * BATCH * 4,
          wrong[0],
          (System.nanoTime() - t0) / 1e9);
      System.out.printf(
          "  %s: %,d examples/s filled, lookup p50 %.2f us (float[] %.2f us), %d wrong%n",
          label, Math.round(n / fill.seconds()), l[0].p50Us(), l[1].p50Us(), wrong[0]);
    }
  }

  /**
   * Rounds of {@link #BATCH} random indices from the warm near replica ({@code lookup}), the same
   * gather from two plain {@code float[]} of all {@code n} values (the physical limit) and {@code
   * lookupInto} reused arrays of other indices (not the lines lookup just brought to cache); counts
   * into {@code wrong} the values that differ from the runner's, which also keeps the JIT from
   * dropping a gather. Timings of lookup, array and lookupInto.
   */
  private static Timings[] lookups(
      TensorCacheClient client, String cacheId, int n, int rounds, long[] wrong) throws Exception {
    float[][] values = new float[2][n];
    for (int i = 0; i < n; i++) {
      values[0][i] = SyntheticRunner.value(ScaleCaches.SEED, 0, i);
      values[1][i] = SyntheticRunner.value(ScaleCaches.SEED, 1, i);
    }
    SplittableRandom random = new SplittableRandom(n);
    long[] indices = new long[BATCH];
    long[] other = new long[BATCH];
    float[][] gathered = new float[2][BATCH];
    float[][] into = new float[2][BATCH];
    Batch[] batch = new Batch[1];
    return Timings.of(
        Rounds.time(
            rounds / 4,
            0,
            rounds,
            1,
            r -> {
              for (int i = 0; i < BATCH; i++) {
                indices[i] = random.nextInt(n);
                other[i] = random.nextInt(n);
              }
            },
            r -> {
              for (int f = 0; f < 2; f++) {
                float[] looked = batch[0].floats(f == 0 ? "chosen_logp" : "rejected_logp");
                for (int i = 0; i < BATCH; i++) {
                  wrong[0] += bits(looked[i]) != bits(gathered[f][i]) ? 1 : 0;
                  wrong[0] += bits(into[f][i]) != bits(values[f][(int) other[i]]) ? 1 : 0;
                }
              }
            },
            i -> batch[0] = client.lookup(cacheId, indices),
            k -> {
              for (int i = 0; i < BATCH; i++) {
                gathered[0][i] = values[0][(int) indices[i]];
                gathered[1][i] = values[1][(int) indices[i]];
              }
            },
            i -> client.lookupInto(cacheId, other, into)));
  }

  private static int bits(float f) {
    return Float.floatToRawIntBits(f);
  }

  /** The synthetic runner over every example of {@code data} in micro-batches, without a cache. */
  private static double runnerAlone(ExampleSet data) {
    SyntheticRunner runner = new SyntheticRunner(ScaleCaches.SEED);
    int count = data.size();
    long rows = 0;
    long t0 = 0;
    for (int pass = 0; pass < 2; pass++) { // the first warms the JIT up
      t0 = System.nanoTime();
      rows = 0;
      for (int from = 0; from < count; from += ScaleCaches.MICRO_BATCH) {
        rows +=
            runner.run(data.slice(from, Math.min(count, from + ScaleCaches.MICRO_BATCH))).size();
      }
    }
    if (rows != count) {
      throw new IllegalStateException("runner returned " + rows + " rows of " + count);
    }
    return count / ((System.nanoTime() - t0) / 1e9);
  }
}
