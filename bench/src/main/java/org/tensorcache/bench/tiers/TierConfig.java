package org.tensorcache.bench.tiers;

import com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.FeatureRunner;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.fields.DType;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The sizes of the tiers part, as the results file holds them: one BF16 vector of {@code width} per
 * example, a cache ten times the budget in ranges too large to gossip; steps of {@code batch} rows,
 * each after a sleep for its training, after at least {@code warmUpS} of warm-up; several fills of
 * caches of the same size per measured node; {@code unboundedBudgetBytes} holds the whole cache.
 */
@JsonNaming(SnakeCaseStrategy.class)
public record TierConfig(
    int examples,
    int width,
    String dtype,
    int rangeSize,
    long cacheBytes,
    long budgetBytes,
    long unboundedBudgetBytes,
    int prefetchSteps,
    int batch,
    int timedSteps,
    int randomRounds,
    double trainMsPerStep,
    String trainWork,
    double warmUpS,
    int fillsPerNode) {
  public static final long SEED = 5;

  /** 80 MiB in a budget of 8, 20 in 2, or a smoke run's 5 in 1 (no warm-up, one fill a node). */
  public static TierConfig of(RunSize s) {
    int n = s.pick(40_960, 10_240, 2_560);
    return new TierConfig(
        n,
        1024,
        "bf16",
        128,
        n * 1024L * DType.BF16.bytes(),
        s.pick(8L << 20, 2L << 20, 1L << 20),
        1L << 30,
        s.pick(8, 8, 2),
        s.pick(256, 256, 128),
        s.pick(2_000, 300, 10),
        s.pick(5_000, 1_000, 20),
        s.pick(2.0, 2.0, 1.0),
        "sleep",
        s.pick(2.0, 1.0, 0.0),
        s.pick(3, 3, 1));
  }

  /** Whether the JIT is warmed up (a node of its own first, 100 steps per loop): not in a smoke. */
  public boolean warmsUp() {
    return warmUpS > 0;
  }

  long warmUpNanos() {
    return (long) (warmUpS * 1e9);
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

  public CacheDefinition definition(String name, ExampleSet data, Path segments) {
    FeatureRunner runner = new FeatureRunner(SEED, width, DType.BF16);
    CacheSpec spec = new CacheSpec(name, data.size(), runner.fields(), rangeSize);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner, data, spec),
        data,
        () -> new FeatureRunner(SEED, width, DType.BF16),
        segments,
        rangeSize);
  }
}
