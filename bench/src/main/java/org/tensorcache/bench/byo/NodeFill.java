package org.tensorcache.bench.byo;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
 * The fill through the embedded node (one JVM, every role, as {@code ClusterBench} starts it) of
 * the cache the command line defines, its runners timed by {@link TimedRunner}. Before it, a
 * warm-up cache of the first rows over the same runners (the same loaded model) is filled, so that
 * the timed fill pays no first-call costs; the timed fill counts from the coordinator's {@code
 * StartFill} until every range is persisted.
 */
final class NodeFill implements AutoCloseable {
  /** The cache's fields, in the order the values are kept. */
  static final List<String> FIELDS =
      List.of("chosen_logp", "rejected_logp", "chosen_tokens", "rejected_tokens");

  private final NodeLauncher.Node node;
  private final CacheDefinition timed;
  private final TimedRunner.Stats stats;

  private NodeFill(NodeLauncher.Node node, CacheDefinition timed, TimedRunner.Stats stats) {
    this.node = node;
    this.timed = timed;
    this.stats = stats;
  }

  /**
   * Starts a node under {@code dir} with {@code definition} and a warm-up cache of its first {@code
   * warmupRows} rows, and fills the warm-up cache.
   */
  static NodeFill start(CacheDefinition definition, int warmupRows, Path dir) throws Exception {
    TimedRunner.Stats stats = new TimedRunner.Stats();
    CacheDefinition timed =
        new CacheDefinition(
            definition.spec(),
            definition.fingerprint(),
            definition.data(),
            () -> new TimedRunner(definition.runners().get(), stats),
            definition.segmentDir(),
            definition.planner());
    int n = Math.toIntExact(definition.spec().n());
    CacheDefinition warmup =
        part(definition, "byo-warmup", Math.min(n, Math.max(1, warmupRows)), dir);
    NodeLauncher.Node node =
        NodeLauncher.startLocal(dir.resolve("node"), List.of(timed, warmup), Duration.ofMinutes(2));
    NodeFill fill = new NodeFill(node, timed, stats);
    try {
      ClusterFill.run(node.system(), node.coordinator(), warmup.cacheId(), false);
      return fill;
    } catch (Exception | Error e) {
      fill.close();
      throw e;
    }
  }

  /**
   * Fills the timed cache: its wall seconds, the process's CPU seconds, and how they split: before
   * the first forward pass, in the runner, between runner calls (merge, replication, scheduling),
   * after the last one (segment, coordinator, status poll).
   */
  Map<String, Object> fill() throws Exception {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    ClusterFill.run(node.system(), node.coordinator(), timed.cacheId(), false);
    long t1 = System.nanoTime();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("seconds", (t1 - t0) / 1e9);
    r.put("cpu_seconds", (os.getProcessCpuTime() - cpu0) / 1e9);
    r.put("runner_calls", stats.calls());
    r.put("before_first_runner_call_s", (stats.firstStart() - t0) / 1e9);
    r.put("in_runner_s", stats.busyNs() / 1e9);
    r.put("between_runner_calls_s", (stats.lastEnd() - stats.firstStart() - stats.busyNs()) / 1e9);
    r.put("after_last_runner_call_s", (t1 - stats.lastEnd()) / 1e9);
    r.put("compute_thread", stats.thread());
    r.put("compute_thread_libtorch_threads", stats.threads());
    return r;
  }

  /** The timed cache's values read back through the client: {@code [field][row]}. */
  float[][] values() throws Exception {
    int n = Math.toIntExact(timed.spec().n());
    Batch batch =
        TensorCacheClient.create(node.system())
            .lookup(timed.cacheId(), LongStream.range(0, n).toArray());
    float[][] out = new float[FIELDS.size()][];
    for (int f = 0; f < out.length; f++) {
      out[f] = batch.asFloats(FIELDS.get(f));
    }
    return out;
  }

  @Override
  public void close() {
    NodeLauncher.stop(node.system());
  }

  /** The first {@code rows} rows of {@code definition} as a cache of its own, one range. */
  private static CacheDefinition part(CacheDefinition definition, String name, int rows, Path dir) {
    ExampleSet all = definition.data();
    List<Example> head = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      var t = Example.as(TokenizedPreference.class, all.get(i), "byo");
      head.add(new TokenizedPreference(i, t.promptIds(), t.chosenIds(), t.rejectedIds()));
    }
    ExampleSet data = all.withExamples(head, all.format());
    CacheSpec spec = new CacheSpec(name, rows, definition.spec().fields(), rows);
    Fingerprint fp;
    try (ModelRunner runner = definition.runners().get()) {
      fp = CacheDefinition.fingerprint(runner, data, spec);
    }
    return new CacheDefinition(
        spec, fp, data, definition.runners(), dir.resolve(name), definition.planner());
  }
}
