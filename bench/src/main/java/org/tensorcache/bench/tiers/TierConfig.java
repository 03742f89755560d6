package org.tensorcache.bench.tiers;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.FeatureRunner;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.fields.DType;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The sizes of the memory-tiers benchmark: a cache of one BF16 feature vector per example, ten
 * times the hot tier's budget, in ranges too large to gossip (replicated by reference).
 *
 * @param n examples
 * @param width elements per example (BF16: 2 bytes each)
 * @param rangeSize examples per range
 * @param budgetBytes the hot tier's budget of the nodes with a budget
 * @param unboundedBytes the budget of the node that holds the whole cache (more than the cache)
 * @param prefetchSteps how far sessions prefetch on the nodes with prefetch
 * @param batch examples per lookup and per step
 * @param steps timed steps per trainer loop
 * @param randomRounds timed random lookups
 * @param trainNanos the sleep a trainer spends on each step's training
 * @param warmUpNanos the least warm-up of each timed path, for the JIT
 * @param fillsPerNode timed fills per measured node, of caches of the same size
 * @param size the size of run these are the sizes of
 */
public record TierConfig(
    int n,
    int width,
    int rangeSize,
    long budgetBytes,
    long unboundedBytes,
    int prefetchSteps,
    int batch,
    int steps,
    int randomRounds,
    long trainNanos,
    long warmUpNanos,
    int fillsPerNode,
    RunSize size) {
  /** Seed of the runner's values. */
  public static final long SEED = 5;

  /**
   * The full sizes (80 MiB cache, 8 MiB budget), the quick ones (20 MiB, 2 MiB), or a smoke run's
   * (5 MiB, 1 MiB; a few steps, no warm-up, one fill per node).
   */
  public static TierConfig of(RunSize size) {
    return switch (size) {
      case FULL ->
          new TierConfig(
              40_960,
              1024,
              128,
              8L << 20,
              1L << 30,
              8,
              256,
              2_000,
              5_000,
              2_000_000L,
              2_000_000_000L,
              3,
              size);
      case QUICK ->
          new TierConfig(
              10_240,
              1024,
              128,
              2L << 20,
              1L << 30,
              8,
              256,
              300,
              1_000,
              2_000_000L,
              1_000_000_000L,
              3,
              size);
      case SMOKE ->
          new TierConfig(
              2_560, 1024, 128, 1L << 20, 1L << 30, 2, 128, 10, 20, 1_000_000L, 0L, 1, size);
    };
  }

  /**
   * Whether the run warms the JIT up before it times anything: a node of its own before the
   * measured ones, and at least {@link TrainerLoop#MIN_WARM_UP_STEPS} steps before each trainer
   * loop. A smoke run (no warm-up time) does neither.
   */
  public boolean warmsUp() {
    return warmUpNanos > 0;
  }

  /** The bytes of every value of the cache. */
  public long cacheBytes() {
    return (long) n * width * DType.BF16.bytes();
  }

  /** The runner of the cache's values. */
  public ModelRunner runner() {
    return new FeatureRunner(SEED, width, DType.BF16);
  }

  /**
   * The caches each measured node fills, one after the other: the first, {@code name}, is the one
   * looked up; the others (same values, other names) make the fill figure a median of several.
   */
  public java.util.List<CacheDefinition> definitions(String name, ExampleSet data, Path dir) {
    java.util.List<CacheDefinition> caches = new java.util.ArrayList<>();
    for (int i = 0; i < fillsPerNode; i++) {
      String id = i == 0 ? name : name + "-" + (i + 1);
      caches.add(definition(id, data, dir.resolve(id)));
    }
    return caches;
  }

  /** The cache {@code name} of {@code data} (its size is the cache's), segments in {@code dir}. */
  public CacheDefinition definition(String name, ExampleSet data, Path segments) {
    CacheSpec spec = new CacheSpec(name, data.size(), runner().fields(), rangeSize);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner(), data, spec),
        data,
        this::runner,
        segments,
        rangeSize);
  }

  /** The configuration for a results file. */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("examples", n);
    m.put("width", width);
    m.put("dtype", "bf16");
    m.put("range_size", rangeSize);
    m.put("cache_bytes", cacheBytes());
    m.put("budget_bytes", budgetBytes);
    m.put("unbounded_budget_bytes", unboundedBytes);
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
