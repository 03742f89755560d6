package org.tensorcache.bench.scale;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.BlockKey;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.bench.fixture.ChildProcess;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;

/**
 * Bytes per cached float: a node fills a warm-up cache, then the measured one of N examples x 2
 * float fields; heap after full collections and native memory are compared before and after, and
 * once the shard entities have passivated. The full run (N = 10 million) measures in a child JVM
 * with native memory tracking, a fixed heap (so that the collector's tables do not grow with the
 * cache) and the product's settings. The quick run (1 million) and the smoke run (two ranges)
 * measure in this JVM, before anything else ran in it, with shard entities passivating after 1 s
 * idle instead of 2 minutes, reading native memory tracking only where this JVM has it on.
 */
final class MemoryMeasure {
  private static final String SHARD_CLASS = ShardActor.class.getName();
  private static final String IDLE =
      "pekko.cluster.sharding.passivation.default-idle-strategy.idle-entity.timeout";

  private static final int MIN_WARM_UP_N = 32 * ScaleCaches.RANGE_SIZE;

  /** NMT categories of running code rather than holding data: compiled code, classes, JIT. */
  private static final List<String> RUNTIME_CATEGORIES =
      List.of(
          "Code", "Compiler", "Arena Chunk", "Class", "Metaspace", "Symbol", "Module", "Thread");

  private static final long START = System.nanoTime();

  private MemoryMeasure() {}

  static Map<String, Object> run(Path work, RunSize size) throws Exception {
    Path dir = work.toAbsolutePath().resolve("memory");
    if (size != RunSize.FULL) {
      boolean smoke = size == RunSize.SMOKE;
      int n = smoke ? 2 * ScaleCaches.RANGE_SIZE : 1_000_000;
      int warmUp = smoke ? 2 * ScaleCaches.RANGE_SIZE : MIN_WARM_UP_N;
      Map<String, Object> r = measure(dir, n, warmUp, Map.of(IDLE, "1s"));
      r.put("jvm", "this one (" + size.label() + " run): heap not fixed");
      return r;
    }
    Path out = work.toAbsolutePath().resolve("memory-result.json");
    Files.deleteIfExists(out);
    List<String> jvm = List.of("-Xms3g", "-Xmx3g", "-XX:NativeMemoryTracking=summary");
    List<String> args = List.of(out.toString(), dir.toString(), "10000000");
    OptionalInt exit =
        ChildProcess.run(
            ChildProcess.jvm(jvm, MemoryMeasure.class.getName(), args),
            Map.of(),
            null,
            Duration.ofMinutes(40));
    if (exit.isEmpty() || exit.getAsInt() != 0 || !Files.exists(out)) {
      throw new IllegalStateException("memory measurement failed or ran over 40 minutes: " + exit);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> result = new ObjectMapper().readValue(out.toFile(), Map.class);
    result.put("jvm", "child: " + String.join(" ", jvm));
    return result;
  }

  /** The child: {@code MemoryMeasure RESULT_JSON WORK_DIR N}, with the product's settings. */
  public static void main(String[] args) throws Exception {
    Map<String, Object> r =
        measure(Path.of(args[1]), Integer.parseInt(args[2]), MIN_WARM_UP_N, Map.of());
    Results.write(Path.of(args[0]), r);
  }

  /**
   * Fills a cache of {@code n} examples on a node started with {@code overrides} in an emptied
   * {@code dir}, after a warm-up cache of at least {@code minWarmUpN}; returns the figures.
   */
  private static Map<String, Object> measure(
      Path dir, int n, int minWarmUpN, Map<String, Object> overrides) throws Exception {
    Files2.fresh(dir);
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("examples", n);
    r.put("floats", 2L * n);
    long jvmOnly = MemoryProbe.settle();
    // a quarter of N: long enough for the JIT to compile the fill's paths fully (a short warm-up
    // leaves megabytes of compiled code to be added during the measured fill)
    CacheDefinition warm = ScaleCaches.definition(dir, "scale-warmup", Math.max(minWarmUpN, n / 4));
    CacheDefinition cache = ScaleCaches.definition(dir, "scale-memory", n);
    // ExampleSet copies the lazy list (List.copyOf), so this is N small example objects
    r.put("dataset_heap_bytes", MemoryProbe.settle() - jvmOnly);
    MemoryProbe base; // the heap, buffers and native memory before the fill, after, and steady
    MemoryProbe filled;
    MemoryProbe steady;
    try (EmbeddedNodes node =
        EmbeddedNodes.one(dir.resolve("node"), List.of(warm, cache), overrides)) {
      // once before the baseline, so that the measuring code's own classes and compiled code
      // are not counted as the cache's
      MemoryProbe.take(dir.resolve("histogram-dry-run.txt"));
      say("node up");
      // the warm-up cache first, so that compiled code, dispatcher threads and buffers exist
      // before the baseline; its shard entities hold a copy of its values until they passivate
      node.fill(warm.cacheId(), Duration.ofMinutes(2));
      node.awaitReplica(0, warm.cacheId(), Duration.ofMinutes(1));
      say("warm-up filled; waiting for its shards to passivate");
      r.put("warm_up_passivation_wait_s", awaitPassivated(node.system(0), Duration.ofMinutes(4)));
      r.put("passivation_idle_timeout", node.system(0).settings().config().getString(IDLE));
      base = MemoryProbe.take(dir.resolve("histogram-base.txt"));
      say("baseline taken, filling " + n + " examples");
      EmbeddedNodes.Fill fill = node.fill(cache.cacheId(), Duration.ofMinutes(30));
      node.awaitReplica(0, cache.cacheId(), Duration.ofMinutes(5));
      r.put("fill_s", Stats.round2(fill.seconds()));
      r.put("status_timeouts", fill.statusTimeouts());
      filled = MemoryProbe.take(dir.resolve("histogram-filled.txt"));
      say("filled in " + Stats.round2(fill.seconds()) + " s; waiting for shards to passivate");
      // shard entities keep their own block until they passivate after being idle
      r.put("passivation_wait_s", awaitPassivated(node.system(0), Duration.ofMinutes(5)));
      steady = MemoryProbe.take(dir.resolve("histogram-steady.txt"));
      say("steady state taken");
      r.put("replicator_and_view_share_blocks", sharedBlocks(node.system(0), cache));
    }
    r.put("shard_actors_at_baseline", base.classes().getOrDefault(SHARD_CLASS, new long[2])[0]);
    r.put("after_fill", figures(base, filled, n));
    r.put("steady", figures(base, steady, n));
    r.put("histogram_top_after_fill", MemoryProbe.delta(Map.of(), filled.classes(), 12));
    say("done");
    return r;
  }

  private static void say(String what) {
    System.out.printf("  memory: %s (%.1f s)%n", what, (System.nanoTime() - START) / 1e9);
  }

  /** The growth from {@code base} to {@code now}, per float of the cache and where it is. */
  private static Map<String, Object> figures(MemoryProbe base, MemoryProbe now, int n)
      throws IOException {
    Map<String, long[]> baseClasses = base.classes();
    Map<String, long[]> nowClasses = now.classes();
    long floats = 2L * n;
    long heap = now.heapUsed() - base.heapUsed();
    boolean tracked = !now.nmtCommitted().isEmpty();
    long direct = now.direct() - base.direct();
    long mapped = now.mapped() - base.mapped();
    long offHeap = tracked ? now.offHeap() - base.offHeap() : direct + mapped;
    Map<String, Long> nmt = new LinkedHashMap<>();
    for (var e : now.nmtCommitted().entrySet()) {
      long d = e.getValue() - base.nmtCommitted().getOrDefault(e.getKey(), 0L);
      if (d != 0 && !e.getKey().equals("Java Heap")) {
        nmt.put(e.getKey(), d);
      }
    }
    // compiled code, class metadata and thread stacks do not grow with N: the first run of a
    // code path pays them once
    long runtime = RUNTIME_CATEGORIES.stream().mapToLong(c -> nmt.getOrDefault(c, 0L)).sum();
    // how many times the values are held: float[] growth over the 4 bytes of each float
    long arrays =
        nowClasses.getOrDefault("[F", new long[2])[1]
            - baseClasses.getOrDefault("[F", new long[2])[1];
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("heap_delta_bytes", heap);
    f.put("off_heap_delta_bytes", offHeap);
    f.put("off_heap_source", tracked ? "native memory tracking" : "buffer pools");
    f.put("direct_buffer_delta_bytes", direct);
    f.put("mapped_buffer_delta_bytes", mapped);
    f.put("bytes_per_float", Stats.round((double) (heap + offHeap) / floats, 3));
    f.put("runtime_off_heap_delta_bytes", runtime);
    f.put(
        "bytes_per_float_without_runtime",
        Stats.round((double) (heap + offHeap - runtime) / floats, 3));
    f.put("heap_bytes_per_float", Stats.round((double) heap / floats, 3));
    f.put("float_array_copies", Stats.round(arrays / (4.0 * floats), 3));
    f.put("shard_actors_alive", nowClasses.getOrDefault(SHARD_CLASS, new long[2])[0]);
    f.put("nmt_committed_delta_bytes", nmt);
    f.put("histogram_delta_top", MemoryProbe.delta(baseClasses, nowClasses, 12));
    return f;
  }

  /**
   * How many ranges' blocks in the node's read view are the very object the local Distributed Data
   * replica holds: those are one copy of the values, not two.
   */
  private static Map<String, Object> sharedBlocks(ActorSystem<?> system, CacheDefinition cache)
      throws Exception {
    var view = TensorCacheNode.get(system).replicaView();
    int ranges = cache.spec().rangeCount();
    int same = 0;
    for (int r = 0; r < ranges; r++) {
      BlockKey key = BlockKey.of(cache.cacheId(), r);
      Replicator.GetResponse<BlockData> response =
          AskPattern.<Replicator.Command, Replicator.GetResponse<BlockData>>ask(
                  DistributedData.get(system).replicator(),
                  replyTo -> new Replicator.Get<>(key, Replicator.readLocal(), replyTo),
                  Duration.ofSeconds(5),
                  system.scheduler())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      if (response instanceof Replicator.GetSuccess<BlockData> ok
          && ok.dataValue().block() == view.block(cache.cacheId(), r)) {
        same++;
      }
    }
    return new TreeMap<>(Map.of("ranges", ranges, "same_object", same));
  }

  /** Waits until no shard entity is alive on this node (asked of sharding); the seconds. */
  private static double awaitPassivated(ActorSystem<?> system, Duration within) throws Exception {
    long t0 = System.nanoTime();
    while (System.nanoTime() - t0 < within.toNanos()) {
      ShardRegion.CurrentShardRegionState state =
          AskPattern.<ClusterShardingQuery, ShardRegion.CurrentShardRegionState>ask(
                  ClusterSharding.get(system).shardState(),
                  replyTo -> new GetShardRegionState(ShardActor.ENTITY_KEY, replyTo),
                  Duration.ofSeconds(5),
                  system.scheduler())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      if (state.getShards().stream().allMatch(s -> s.getEntityIds().isEmpty())) {
        break;
      }
      Thread.sleep(250);
    }
    return Stats.round2((System.nanoTime() - t0) / 1e9);
  }
}
