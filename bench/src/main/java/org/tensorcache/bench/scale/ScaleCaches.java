package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.util.AbstractList;
import java.util.Objects;
import java.util.RandomAccess;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
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

  public static final long SEED = 11;

  private ScaleCaches() {}

  /** A cache of {@code n} synthetic examples named {@code name}, segments under {@code dir}. */
  public static CacheDefinition definition(Path dir, String name, int n) {
    ExampleSet data = dataset(name, n);
    SyntheticRunner runner = new SyntheticRunner(SEED);
    CacheSpec spec = new CacheSpec(name, n, runner.fields(), RANGE_SIZE);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner, data, spec),
        data,
        () -> new SyntheticRunner(SEED),
        dir.resolve(name + "-segments"),
        MICRO_BATCH);
  }

  /**
   * {@code n} examples made when asked for (the synthetic runner reads only the index), so that ten
   * million need not exist as objects; its digest depends on {@code name} and {@code n}.
   * ExampleSet's {@code List.copyOf} asks for every one: they share three strings, about 36 bytes
   * an example with the copy's reference.
   */
  static ExampleSet dataset(String name, int n) {
    class Lazy extends AbstractList<PreferenceExample> implements RandomAccess {
      @Override
      public PreferenceExample get(int index) {
        return new PreferenceExample(
            Objects.checkIndex(index, n), "synthetic prompt", "chosen", "rejected");
      }

      @Override
      public int size() {
        return n;
      }
    }
    return new ExampleSet(
        Path.of(name + "-n" + n + ".synthetic"),
        new Lazy(),
        SyntheticRunner.sha256("lazy-preferences " + name + " n=" + n));
  }
}
