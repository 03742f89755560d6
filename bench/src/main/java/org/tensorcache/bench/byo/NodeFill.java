package org.tensorcache.bench.byo;

import ai.djl.pytorch.jni.JniUtils;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.ForwardingRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The fill through the embedded node of the cache the command line defines, its runners timed (two
 * clock reads per call, no value or fingerprint changed), after a warm-up cache of the first rows
 * over the same runners; timed from the coordinator's {@code StartFill} until all is persisted.
 */
final class NodeFill implements AutoCloseable {
  private final CacheDefinition timed;
  private NodeLauncher.Node node;
  private long firstStart;
  private long lastEnd;
  private long busyNs;
  private int calls;
  private int threads = -1;
  private String thread = "";

  private NodeFill(CacheDefinition d) {
    this.timed =
        new CacheDefinition(
            d.spec(),
            d.fingerprint(),
            d.data(),
            () ->
                new ForwardingRunner(d.runners().get()) {
                  @Override
                  public RunnerOutput run(List<? extends Example> batch) {
                    long start = System.nanoTime();
                    RunnerOutput out = super.run(batch);
                    record(start, System.nanoTime());
                    return out;
                  }
                },
            d.segmentDir(),
            d.planner());
  }

  /** Starts a node under {@code dir} and fills the warm-up cache of the first rows. */
  static NodeFill start(CacheDefinition definition, int warmupRows, Path dir) throws Exception {
    NodeFill fill = new NodeFill(definition);
    int n = Math.toIntExact(definition.spec().n());
    CacheDefinition warmup = head(definition, Math.min(n, Math.max(1, warmupRows)), dir);
    var caches = List.of(fill.timed, warmup);
    fill.node = NodeLauncher.startLocal(dir.resolve("node"), caches, Duration.ofMinutes(2));
    try {
      ClusterFill.run(fill.node.system(), fill.node.coordinator(), warmup.cacheId(), false);
      return fill;
    } catch (Exception | Error e) {
      fill.close();
      throw e;
    }
  }

  private synchronized void record(long start, long end) {
    if (calls++ == 0) {
      firstStart = start;
      threads = JniUtils.getNumThreads();
      thread = Thread.currentThread().getName();
    }
    busyNs += end - start;
    lastEnd = end;
  }

  /**
   * Fills the timed cache: its wall and CPU seconds, split into before the first runner call, in
   * the runner, between calls (merge, replication, scheduling) and after the last (segment,
   * coordinator, status poll).
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
    synchronized (this) {
      r.put("runner_calls", calls);
      r.put("before_first_runner_call_s", (firstStart - t0) / 1e9);
      r.put("in_runner_s", busyNs / 1e9);
      r.put("between_runner_calls_s", (lastEnd - firstStart - busyNs) / 1e9);
      r.put("after_last_runner_call_s", (t1 - lastEnd) / 1e9);
      r.put("compute_thread", thread);
      r.put("compute_thread_libtorch_threads", threads);
    }
    return r;
  }

  /** The timed cache's values read back through the client: {@code [field][row]}. */
  float[][] values() throws Exception {
    long[] all = LongStream.range(0, timed.spec().n()).toArray();
    var batch = TensorCacheClient.create(node.system()).lookup(timed.cacheId(), all);
    return CausalLmLogprobRunner.FIELDS.stream()
        .map(f -> batch.asFloats(f.name()))
        .toArray(float[][]::new);
  }

  @Override
  public void close() {
    NodeLauncher.stop(node.system());
  }

  /** The first {@code rows} rows of {@code definition} as a cache of its own, one range. */
  private static CacheDefinition head(CacheDefinition definition, int rows, Path dir) {
    ExampleSet all = definition.data();
    List<Example> head = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      var t = Example.as(TokenizedPreference.class, all.get(i), "byo");
      head.add(new TokenizedPreference(i, t.promptIds(), t.chosenIds(), t.rejectedIds()));
    }
    ExampleSet data = all.withExamples(head, all.format());
    CacheSpec spec = new CacheSpec("byo-warmup", rows, definition.spec().fields(), rows);
    try (ModelRunner runner = definition.runners().get()) {
      var fp = CacheDefinition.fingerprint(runner, data, spec);
      return new CacheDefinition(
          spec, fp, data, definition.runners(), dir.resolve("byo-warmup"), definition.planner());
    }
  }
}
