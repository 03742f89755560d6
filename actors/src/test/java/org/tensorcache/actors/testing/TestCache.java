package org.tensorcache.actors.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.HiddenMeanRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * A small real cache for cluster tests: a seeded data set, a saved model, and the values a single
 * process computes for it, micro-batch by aligned micro-batch.
 */
public final class TestCache {
  public static final int MICRO_BATCH = 16;

  public final Path dir;
  public final ExampleSet data;
  public final CacheSpec spec;
  public final Fingerprint fingerprint;
  public final AtomicLong computedExamples = new AtomicLong();

  /** Every forward pass of this cache's runners goes through this gate; it starts open. */
  public final Gate gate = new Gate();

  private final Path modelDir;
  private final boolean vectors;
  private final DType vectorDtype;

  public TestCache(Path dir, int examples, int rangeSize) throws IOException {
    this(dir, examples, rangeSize, false);
  }

  /**
   * With {@code vectors}, the cache holds a hidden-state vector per example instead of log-probs.
   */
  public TestCache(Path dir, int examples, int rangeSize, boolean vectors) throws IOException {
    this(dir, examples, rangeSize, vectors, DType.F32);
  }

  /** A cache of hidden-state vectors stored as {@code vectorDtype}. */
  public TestCache(Path dir, int examples, int rangeSize, DType vectorDtype) throws IOException {
    this(dir, examples, rangeSize, true, vectorDtype);
  }

  private TestCache(Path dir, int examples, int rangeSize, boolean vectors, DType vectorDtype)
      throws IOException {
    this.dir = dir;
    this.vectors = vectors;
    this.vectorDtype = vectorDtype;
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 5, examples);
    this.data = ExampleSet.load(dir.resolve("data.jsonl"));
    this.modelDir = dir.resolve("model");
    try (TinyLm lm = TinyLm.create(new LmConfig(ByteTokenizer.VOCAB_SIZE, 16, 24, 2, 3))) {
      lm.save(modelDir);
    }
    try (ModelRunner runner = newRunner()) {
      this.spec = new CacheSpec("test-ref", examples, runner.fields(), rangeSize);
      this.fingerprint = CacheDefinition.fingerprint(runner, data, spec);
    }
  }

  /**
   * A runner over a freshly loaded copy of the model that counts the examples it computes and
   * passes {@link #gate} before each forward pass.
   */
  public GatedRunner newRunner() {
    try {
      TinyLm lm = TinyLm.load(modelDir);
      ModelRunner inner =
          vectors
              ? new HiddenMeanRunner(lm, 64, 512, vectorDtype)
              : new ReferenceLogprobRunner(lm, 64, 512);
      return new GatedRunner(inner, computedExamples, gate);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public CacheDefinition definition() {
    return new CacheDefinition(
        spec, fingerprint, data, this::newRunner, dir.resolve("segments"), MICRO_BATCH);
  }

  public String cacheId() {
    return fingerprint.cacheId();
  }

  /**
   * Per field, all N values ({@code n * width} floats) as one process computes them in aligned
   * micro-batches.
   */
  public float[][] reference() {
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[(int) spec.n() * spec.fields().get(f).width()];
    }
    try (ModelRunner runner = newRunner()) {
      for (long from = 0; from < spec.n(); from += MICRO_BATCH) {
        List<Example> group = data.slice(from, Math.min(spec.n(), from + MICRO_BATCH));
        RunnerOutput out = runner.run(group);
        for (int row = 0; row < out.size(); row++) {
          for (int f = 0; f < values.length; f++) {
            float[] v = out.value(f, row);
            System.arraycopy(v, 0, values[f], (int) out.index(row) * v.length, v.length);
          }
        }
      }
    }
    computedExamples.set(0);
    return values;
  }

  /**
   * Per field, all N values as the cache stores them (an array of the field's dtype): the runner's
   * floats of {@link #reference()} converted as a block converts them.
   */
  public Object[] storedReference() {
    float[][] floats = reference();
    Object[] stored = new Object[floats.length];
    for (int f = 0; f < floats.length; f++) {
      DType t = spec.fields().get(f).dtype();
      stored[f] = t.newArray(floats[f].length);
      FieldArrays.putFloats(t, stored[f], 0, floats[f], false);
    }
    return stored;
  }
}
