package org.tensorcache.bench.byo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Fills through the embedded node (one JVM, every role, as {@code ClusterBench} starts it). The
 * cache the command line defines is split into chunk caches of consecutive rows over the same
 * runners (the same loaded model), so that the fills can be interleaved with the references' runs
 * of the same rows; each fill is timed from the coordinator's {@code StartFill} until every range
 * is persisted. The node is warmed first by filling a small cache of the first rows.
 */
final class NodeFill implements AutoCloseable {
  private static final String[] FIELDS = {
    "chosen_logp", "rejected_logp", "chosen_tokens", "rejected_tokens"
  };

  private final NodeLauncher.Node node;
  private final List<CacheDefinition> chunks;
  private final List<TimedRunner.Stats> stats;
  private final float[][] values;
  private int computeThreads = -1;
  private String computeThread = "";

  private NodeFill(
      NodeLauncher.Node node, List<CacheDefinition> chunks, List<TimedRunner.Stats> stats, int n) {
    this.node = node;
    this.chunks = chunks;
    this.stats = stats;
    this.values = new float[FIELDS.length][n];
  }

  /**
   * Starts a node under {@code dir} with {@code definition} split into caches of {@code chunkRows}
   * rows (one range each), and fills a warm-up cache of its first {@code warmupRows} rows.
   */
  static NodeFill start(CacheDefinition definition, int chunkRows, int warmupRows, Path dir)
      throws Exception {
    int n = Math.toIntExact(definition.spec().n());
    List<CacheDefinition> chunks = new ArrayList<>();
    List<TimedRunner.Stats> stats = new ArrayList<>();
    for (int from = 0, k = 0; from < n; from += chunkRows, k++) {
      TimedRunner.Stats s = new TimedRunner.Stats();
      stats.add(s);
      chunks.add(
          part(
              definition,
              definition.spec().name() + "-" + k,
              from,
              Math.min(n, from + chunkRows),
              dir.resolve("segments-" + k),
              s));
    }
    List<CacheDefinition> all = new ArrayList<>(chunks);
    CacheDefinition warmup =
        part(definition, "byo-warmup", 0, warmupRows, dir.resolve("warmup-segments"), null);
    all.add(warmup);
    NodeLauncher.Node node =
        NodeLauncher.startLocal(dir.resolve("node"), all, Duration.ofMinutes(2));
    NodeFill fill = new NodeFill(node, chunks, stats, n);
    try {
      ClusterFill.status(node.system(), node.coordinator(), warmup.cacheId()); // coordinator up
      ClusterFill.run(node.system(), node.coordinator(), warmup.cacheId(), false);
      return fill;
    } catch (Exception | Error e) {
      fill.close();
      throw e;
    }
  }

  /** The chunk caches' count. */
  int chunks() {
    return chunks.size();
  }

  /**
   * Fills chunk {@code k} (rows from {@code at}) timed into {@code tally}, and reads its values
   * back through the client: wall time, CPU time, and how it splits: before the first micro-batch,
   * in the runner, between micro-batches (merge, replication, scheduling) and after the last one
   * (the segment, the coordinator's record, the status poll).
   */
  void fill(int k, int at, Tally tally) throws Exception {
    var cpu =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    CacheDefinition chunk = chunks.get(k);
    TimedRunner.Stats s = stats.get(k);
    Map<String, Double> threads0 = ThreadCpu.snapshot();
    long cpu0 = cpu.getProcessCpuTime();
    long t0 = System.nanoTime();
    ClusterFill.run(node.system(), node.coordinator(), chunk.cacheId(), false);
    long t1 = System.nanoTime();
    double cpuS = (cpu.getProcessCpuTime() - cpu0) / 1e9;
    tally.addThreadCpu(ThreadCpu.groups(threads0, ThreadCpu.snapshot()));
    int rows = Math.toIntExact(chunk.spec().n());
    tally.add(
        rows,
        (t1 - t0) / 1e9,
        Map.of(
            "before_first_micro_batch_s", (s.firstStart() - t0) / 1e9,
            "in_runner_s", s.busyNs() / 1e9,
            "between_micro_batches_s", (s.lastEnd() - s.firstStart() - s.busyNs()) / 1e9,
            "after_last_micro_batch_s", (t1 - s.lastEnd()) / 1e9,
            "after_last_micro_batch_to_segment_written_s",
                Duration.between(s.lastEndWall(), newest(chunk.segmentDir())).toNanos() / 1e9,
            "cpu_s", cpuS));
    computeThreads = s.threads();
    computeThread = s.thread();
    Batch batch =
        TensorCacheClient.create(node.system())
            .lookup(chunk.cacheId(), LongStream.range(0, rows).toArray());
    for (int f = 0; f < FIELDS.length; f++) {
      System.arraycopy(batch.asFloats(FIELDS[f]), 0, values[f], at, rows);
    }
  }

  /** The newest modification time of a file under {@code dir} (the segment just written). */
  private static Instant newest(Path dir) throws IOException {
    try (var files = Files.walk(dir)) {
      return files
          .filter(Files::isRegularFile)
          .map(NodeFill::modified)
          .max(Comparator.naturalOrder())
          .orElse(Instant.EPOCH);
    }
  }

  private static Instant modified(Path file) {
    try {
      return Files.getLastModifiedTime(file).toInstant();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every filled row's values, read from the node: {@code [field][row]} in the runner's order. */
  float[][] values() {
    return values;
  }

  /** libtorch's intra-op threads seen from the compute thread in the last fill. */
  int computeThreads() {
    return computeThreads;
  }

  /** The compute thread's name. */
  String computeThread() {
    return computeThread;
  }

  @Override
  public void close() {
    NodeLauncher.stop(node.system());
  }

  /**
   * Rows {@code [from, to)} of {@code definition} as a cache of its own named {@code name}, over
   * the same runners (timed into {@code stats} unless null), one range.
   */
  private static CacheDefinition part(
      CacheDefinition definition,
      String name,
      int from,
      int to,
      Path segments,
      TimedRunner.Stats stats) {
    ExampleSet all = definition.data();
    List<Example> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(reindexed(all.get(i), i - from));
    }
    ExampleSet data = all.withExamples(rows, all.format());
    CacheSpec spec = new CacheSpec(name, to - from, definition.spec().fields(), to - from);
    Fingerprint fp;
    try (ModelRunner runner = definition.runners().get()) {
      fp = CacheDefinition.fingerprint(runner, data, spec);
    }
    return new CacheDefinition(
        spec,
        fp,
        data,
        stats == null
            ? definition.runners()
            : () -> new TimedRunner(definition.runners().get(), stats),
        segments,
        definition.planner());
  }

  private static Example reindexed(Example e, long index) {
    var t = Example.as(TokenizedPreference.class, e, "byo");
    return new TokenizedPreference(index, t.promptIds(), t.chosenIds(), t.rejectedIds());
  }
}
