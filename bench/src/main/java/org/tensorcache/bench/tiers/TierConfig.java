package org.tensorcache.bench.tiers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.FeatureRunner;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.fields.DType;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The sizes of the tiers part: one BF16 vector of {@link #WIDTH} per example, a cache ten times the
 * budget ({@code budgetBytes}) in ranges too large to gossip; {@code steps} timed steps of {@code
 * batch} rows, each after {@code trainNanos} of sleep, after at least {@code warmUpNanos} of
 * warm-up; {@code fillsPerNode} fills of caches of the same size per measured node.
 */
public record TierConfig(
    int n,
    long budgetBytes,
    int prefetchSteps,
    int batch,
    int steps,
    int randomRounds,
    long trainNanos,
    long warmUpNanos,
    int fillsPerNode) {
  public static final int WIDTH = 1024;
  public static final int RANGE_SIZE = 128;

  /** The budget of the node that holds the whole cache. */
  public static final long UNBOUNDED = 1L << 30;

  public static final long SEED = 5;

  /** 80 MiB in a budget of 8, 20 in 2, or a smoke run's 5 in 1 (no warm-up, one fill a node). */
  public static TierConfig of(RunSize s) {
    return new TierConfig(
        s.pick(40_960, 10_240, 2_560),
        s.pick(8L << 20, 2L << 20, 1L << 20),
        s.pick(8, 8, 2),
        s.pick(256, 256, 128),
        s.pick(2_000, 300, 10),
        s.pick(5_000, 1_000, 20),
        s.pick(2_000_000L, 2_000_000L, 1_000_000L),
        s.pick(2_000_000_000L, 1_000_000_000L, 0L),
        s.pick(3, 3, 1));
  }

  /** Whether the JIT is warmed up (a node of its own first, 100 steps per loop): not in a smoke. */
  public boolean warmsUp() {
    return warmUpNanos > 0;
  }

  public long cacheBytes() {
    return (long) n * WIDTH * DType.BF16.bytes();
  }

  /**
   * The caches a measured node fills: the first, {@code name}, is the one looked up; the others
   * (same values) make the fill figure a median.
   */
  public List<CacheDefinition> definitions(String name, ExampleSet data, Path dir) {
    List<CacheDefinition> caches = new ArrayList<>();
    for (int i = 0; i < fillsPerNode; i++) {
      String id = i == 0 ? name : name + "-" + (i + 1);
      caches.add(definition(id, data, dir.resolve(id)));
    }
    return caches;
  }

  /** The cache {@code name} of {@code data}, its segments in {@code segments}. */
  public CacheDefinition definition(String name, ExampleSet data, Path segments) {
    FeatureRunner runner = new FeatureRunner(SEED, WIDTH, DType.BF16);
    CacheSpec spec = new CacheSpec(name, data.size(), runner.fields(), RANGE_SIZE);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner, data, spec),
        data,
        () -> new FeatureRunner(SEED, WIDTH, DType.BF16),
        segments,
        RANGE_SIZE);
  }

  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("examples", n);
    m.put("width", WIDTH);
    m.put("dtype", "bf16");
    m.put("range_size", RANGE_SIZE);
    m.put("cache_bytes", cacheBytes());
    m.put("budget_bytes", budgetBytes);
    m.put("unbounded_budget_bytes", UNBOUNDED);
    m.put("prefetch_steps", prefetchSteps);
    m.put("batch", batch);
    m.put("timed_steps", steps);
    m.put("random_rounds", randomRounds);
    m.put("train_ms_per_step", trainNanos / 1e6);
    m.put("train_work", "sleep");
    m.put("warm_up_s", warmUpNanos / 1e9);
    m.put("fills_per_node", fillsPerNode);
    return m;
  }
}
