package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** A small real cache (seeded data, a tiny saved model) and its values computed in one process. */
final class SmallCache {
  static final int MICRO_BATCH = 16;

  final ExampleSet data;
  final CacheSpec spec;
  final Fingerprint fingerprint;
  private final Path dir;
  private final Path modelDir;

  SmallCache(Path dir, int examples, int rangeSize) throws IOException {
    this.dir = dir;
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 5, examples);
    this.data = ExampleSet.load(dir.resolve("data.jsonl"));
    this.modelDir = dir.resolve("model");
    try (TinyLm lm = TinyLm.create(new LmConfig(ByteTokenizer.VOCAB_SIZE, 16, 24, 2, 3))) {
      lm.save(modelDir);
    }
    try (ModelRunner runner = newRunner()) {
      this.spec = new CacheSpec("small-ref", examples, runner.fields(), rangeSize);
      this.fingerprint = CacheDefinition.fingerprint(runner, data, spec);
    }
  }

  ModelRunner newRunner() {
    try {
      return new ReferenceLogprobRunner(TinyLm.load(modelDir), 64, 512);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  CacheDefinition definition() {
    return new CacheDefinition(
        spec, fingerprint, data, this::newRunner, dir.resolve("segments"), MICRO_BATCH);
  }

  /**
   * The definition with runners that take at least {@code millis} per micro-batch, so that a fill
   * lasts long enough to be watched; the values and the fingerprint are the same.
   */
  CacheDefinition slowDefinition(long millis) {
    return new CacheDefinition(
        spec,
        fingerprint,
        data,
        () -> new SlowRunner(newRunner(), millis),
        dir.resolve("segments"),
        MICRO_BATCH);
  }

  /** Per field, all N values as one process computes them in aligned micro-batches. */
  float[][] reference() {
    float[][] values = new float[spec.fields().size()][(int) spec.n()];
    try (ModelRunner runner = newRunner()) {
      for (long from = 0; from < spec.n(); from += MICRO_BATCH) {
        List<Example> group = data.slice(from, Math.min(spec.n(), from + MICRO_BATCH));
        RunnerOutput out = runner.run(group);
        for (int row = 0; row < out.size(); row++) {
          for (int f = 0; f < values.length; f++) {
            values[f][(int) out.index(row)] = out.value(f, row)[0];
          }
        }
      }
    }
    return values;
  }
}
