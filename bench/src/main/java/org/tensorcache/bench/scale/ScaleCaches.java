package org.tensorcache.bench.scale;

import java.nio.file.Path;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.spec.CacheSpec;

/** The caches of the scale part (and of the secure fill): synthetic values, large ranges. */
public final class ScaleCaches {
  /**
   * Examples per range: ten million examples make 1,221 ranges, well under MAX_RANGES, and a block
   * (64 KiB of values) stays under the 128 KiB gossip budget, so values are replicated by gossip.
   * Fewer, larger ranges also mean fewer segment files, each written with two fsyncs.
   */
  public static final int RANGE_SIZE = 8192;

  /** Whole ranges per forward pass: the synthetic runner costs nothing per call. */
  static final int MICRO_BATCH = RANGE_SIZE;

  /** Seed of the synthetic runner's values. */
  public static final long SEED = 11;

  private ScaleCaches() {}

  /**
   * A cache of {@code n} synthetic examples named {@code name}, with segments under {@code dir}.
   */
  public static CacheDefinition definition(Path dir, String name, int n) {
    return definition(dir, name, n, RANGE_SIZE);
  }

  /** The same with {@code rangeSize} examples per range, computed a whole range at a time. */
  static CacheDefinition definition(Path dir, String name, int n, int rangeSize) {
    ExampleSet data = LazyPreferences.dataset(name, n);
    SyntheticRunner runner = new SyntheticRunner(SEED);
    CacheSpec spec = new CacheSpec(name, n, runner.fields(), rangeSize);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner, data, spec),
        data,
        () -> new SyntheticRunner(SEED),
        dir.resolve(name + "-segments"),
        rangeSize);
  }
}
