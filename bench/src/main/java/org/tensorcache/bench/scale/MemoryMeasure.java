package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.report.Stats;

/**
 * The memory measurement itself: a node of this JVM fills a warm-up cache, then the measured cache;
 * the heap after full collections and the native memory are compared before and after, and once the
 * shard entities have passivated.
 */
final class MemoryMeasure {
  private static final String SHARD_CLASS = "org.tensorcache.actors.shard.ShardActor";

  /** The smallest warm-up cache of a measurement: 32 ranges of the measured cache's size. */
  static final int MIN_WARM_UP_N = 32 * ScaleCaches.RANGE_SIZE;

  /** NMT categories of running code rather than holding data: compiled code, classes, JIT. */
  private static final java.util.Set<String> RUNTIME_CATEGORIES =
      java.util.Set.of(
          "Code", "Compiler", "Arena Chunk", "Class", "Metaspace", "Symbol", "Module", "Thread");

  private MemoryMeasure() {}

  /**
   * Fills a cache of {@code n} examples on a node of this JVM started with {@code overrides} and
   * returns the figures; a warm-up cache of at least {@code minWarmUpN} examples is filled first.
   * {@code dir} is emptied first.
   */
  static Map<String, Object> measure(Path dir, int n, int minWarmUpN, Map<String, Object> overrides)
      throws Exception {
    org.tensorcache.bench.fixture.Files2.fresh(dir);
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
    MemoryProbe.Snapshot base;
    MemoryProbe.Snapshot filled;
    MemoryProbe.Snapshot steady;
    try (EmbeddedNodes node =
        EmbeddedNodes.one(dir.resolve("node"), List.of(warm, cache), overrides)) {
      // once before the baseline, so that the measuring code's own classes and compiled code
      // are not counted as the cache's
      MemoryProbe.take(dir.resolve("histogram-dry-run.txt"));
      say("node up");
      // the warm-up cache first, so that compiled code, dispatcher threads and buffers exist
      // before the baseline and are not counted as the measured cache's; its shard entities hold
      // a copy of its values until they passivate (2 to 3 minutes with the default idle timeout)
      node.fill(warm.cacheId(), Duration.ofMinutes(2));
      node.awaitReplica(0, warm.cacheId(), Duration.ofMinutes(1));
      say("warm-up filled; waiting for its shards to passivate");
      r.put("warm_up_passivation_wait_s", awaitPassivated(node.system(0), Duration.ofMinutes(4)));
      r.put("passivation_idle_timeout", idleTimeout(node.system(0)));
      base = MemoryProbe.take(dir.resolve("histogram-base.txt"));
      say("baseline taken, filling " + n + " examples");
      EmbeddedNodes.Fill timed = node.fill(cache.cacheId(), Duration.ofMinutes(30));
      double fill = timed.seconds();
      node.awaitReplica(0, cache.cacheId(), Duration.ofMinutes(5));
      r.put("fill_s", Stats.round2(fill));
      r.put("status_timeouts", timed.statusTimeouts());
      filled = MemoryProbe.take(dir.resolve("histogram-filled.txt"));
      say("filled in " + Stats.round2(fill) + " s; waiting for shards to passivate");
      // shard entities keep their own block until they passivate after being idle
      r.put("passivation_wait_s", awaitPassivated(node.system(0), Duration.ofMinutes(5)));
      steady = MemoryProbe.take(dir.resolve("histogram-steady.txt"));
      say("steady state taken");
      r.put("replicator_and_view_share_blocks", sharedBlocks(node.system(0), cache));
    }
    Map<String, long[]> baseHistogram = MemoryProbe.histogram(base.histogram());
    Map<String, long[]> filledHistogram = MemoryProbe.histogram(filled.histogram());
    r.put("shard_actors_at_baseline", baseHistogram.getOrDefault(SHARD_CLASS, new long[2])[0]);
    r.put("after_fill", figures(base, baseHistogram, filled, filledHistogram, n));
    r.put(
        "steady",
        figures(base, baseHistogram, steady, MemoryProbe.histogram(steady.histogram()), n));
    r.put("histogram_top_after_fill", MemoryProbe.top(filledHistogram, 12));
    say("done");
    return r;
  }

  private static final long START = System.nanoTime();

  private static void say(String what) {
    System.out.printf("  memory: %s (%.1f s)%n", what, (System.nanoTime() - START) / 1e9);
  }

  /** The growth from {@code base} to {@code now}, per float of the cache and where it is. */
  private static Map<String, Object> figures(
      MemoryProbe.Snapshot base,
      Map<String, long[]> baseHistogram,
      MemoryProbe.Snapshot now,
      Map<String, long[]> nowHistogram,
      int n) {
    long floats = 2L * n;
    long heap = now.heapUsed() - base.heapUsed();
    boolean tracked = !now.nmtCommitted().isEmpty();
    long offHeap =
        tracked
            ? now.offHeap() - base.offHeap()
            : now.direct() - base.direct() + now.mapped() - base.mapped();
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("heap_delta_bytes", heap);
    f.put("off_heap_delta_bytes", offHeap);
    f.put("off_heap_source", tracked ? "native memory tracking" : "buffer pools");
    f.put("direct_buffer_delta_bytes", now.direct() - base.direct());
    f.put("mapped_buffer_delta_bytes", now.mapped() - base.mapped());
    f.put("bytes_per_float", round3((double) (heap + offHeap) / floats));
    long runtime = 0;
    for (String category : RUNTIME_CATEGORIES) {
      runtime +=
          now.nmtCommitted().getOrDefault(category, 0L)
              - base.nmtCommitted().getOrDefault(category, 0L);
    }
    // compiled code, class metadata and thread stacks do not grow with N: the first run of a
    // code path pays them once
    f.put("runtime_off_heap_delta_bytes", runtime);
    f.put("bytes_per_float_without_runtime", round3((double) (heap + offHeap - runtime) / floats));
    f.put("heap_bytes_per_float", round3((double) heap / floats));
    long[] arrays = nowHistogram.getOrDefault("[F", new long[2]);
    long[] arraysBase = baseHistogram.getOrDefault("[F", new long[2]);
    // how many times the values are held: float[] growth over the 4 bytes of each float
    f.put("float_array_copies", round3((double) (arrays[1] - arraysBase[1]) / (4.0 * floats)));
    f.put("shard_actors_alive", nowHistogram.getOrDefault(SHARD_CLASS, new long[2])[0]);
    Map<String, Long> nmt = new LinkedHashMap<>();
    for (var e : now.nmtCommitted().entrySet()) {
      long d = e.getValue() - base.nmtCommitted().getOrDefault(e.getKey(), 0L);
      if (d != 0 && !e.getKey().equals("Java Heap")) {
        nmt.put(e.getKey(), d);
      }
    }
    f.put("nmt_committed_delta_bytes", nmt);
    f.put("histogram_delta_top", MemoryProbe.histogramDelta(baseHistogram, nowHistogram, 12));
    return f;
  }

  /**
   * How many ranges' blocks in the node's read view are the very object the local Distributed Data
   * replica holds: those are one copy of the values, not two.
   */
  private static Map<String, Object> sharedBlocks(ActorSystem<?> system, CacheDefinition cache)
      throws Exception {
    var view = TensorCacheNode.get(system).replicaView();
    var replicator = DistributedData.get(system).replicator();
    int ranges = cache.spec().rangeCount();
    int same = 0;
    for (int r = 0; r < ranges; r++) {
      BlockKey key = BlockKey.of(cache.cacheId(), r);
      Replicator.GetResponse<BlockData> response =
          AskPattern.<Replicator.Command, Replicator.GetResponse<BlockData>>ask(
                  replicator,
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
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("ranges", ranges);
    out.put("same_object", same);
    return out;
  }

  /** Waits until no shard entity is alive (they passivate when idle); returns the seconds. */
  private static double awaitPassivated(ActorSystem<?> system, Duration within) throws Exception {
    long t0 = System.nanoTime();
    while (shardEntities(system) > 0 && System.nanoTime() - t0 < within.toNanos()) {
      Thread.sleep(250);
    }
    return Stats.round2((System.nanoTime() - t0) / 1e9);
  }

  /** Shard entities alive on this node's region, asked of sharding (no heap walk). */
  private static int shardEntities(ActorSystem<?> system) throws Exception {
    ShardRegion.CurrentShardRegionState state =
        AskPattern.<ClusterShardingQuery, ShardRegion.CurrentShardRegionState>ask(
                ClusterSharding.get(system).shardState(),
                replyTo -> new GetShardRegionState(ShardActor.ENTITY_KEY, replyTo),
                Duration.ofSeconds(5),
                system.scheduler())
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    return state.getShards().stream().mapToInt(s -> s.getEntityIds().size()).sum();
  }

  private static String idleTimeout(ActorSystem<?> system) {
    return system
        .settings()
        .config()
        .getString("pekko.cluster.sharding.passivation.default-idle-strategy.idle-entity.timeout");
  }

  static double round3(double x) {
    return Math.round(x * 1000) / 1000.0;
  }
}
