package org.tensorcache.bench.micro;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/** Specs, blocks and lookup replies shared by the micro benchmarks and their checks. */
final class Fixtures {
  /** Examples of the synthetic data set lookups draw their indices from (the demo's default). */
  static final long EXAMPLES = 20_000;

  private Fixtures() {}

  /**
   * The spec of a one-range cache: {@code logp-N} is the reference-logprob layout (two scalar
   * fields), {@code features-N} one {@code [128]} field, N examples in the range.
   */
  static CacheSpec spec(String layout) {
    int dash = layout.lastIndexOf('-');
    int length = Integer.parseInt(layout.substring(dash + 1));
    List<FieldSpec> fields =
        switch (layout.substring(0, dash)) {
          case "logp" ->
              List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));
          case "features" -> List.of(FieldSpec.vector("features", 128));
          default ->
              throw new IllegalArgumentException(
                  "layout '" + layout + "', expected logp-N or features-N");
        };
    return new CacheSpec("micro", length, fields, length);
  }

  /** Floats per example, all fields. */
  static int rowFloats(CacheSpec spec) {
    return spec.fields().stream().mapToInt(FieldSpec::width).sum();
  }

  /** Range 0 of {@code spec} with every example present and seeded log-prob-like values. */
  static Block full(CacheSpec spec, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int length = spec.rangeLength(0);
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[length * spec.fields().get(f).width()];
      for (int k = 0; k < values[f].length; k++) {
        values[f][k] = (float) (-50 * random.nextDouble());
      }
    }
    long[] presence = new long[(length + 63) / 64];
    for (int i = 0; i < length; i++) {
      presence[i >>> 6] |= 1L << i;
    }
    return Block.adopt(spec, 0, values, presence);
  }

  /** The fingerprint segments of {@code spec} are tagged with. */
  static Fingerprint fingerprint(CacheSpec spec) {
    return Fingerprint.of(new FingerprintInputs("micro", "1", "w", "d", Map.of(), spec));
  }

  /** A lookup's {@code batch} indices, drawn uniformly from the data set. */
  static long[] indices(int batch, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long[] indices = new long[batch];
    for (int i = 0; i < batch; i++) {
      indices[i] = random.nextLong(EXAMPLES);
    }
    return indices;
  }

  /** The values of a reply of {@code batch} indices: two scalar fields, as in the DPO cache. */
  static float[][] replyValues(int batch, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[][] values = new float[2][batch];
    for (float[] field : values) {
      for (int i = 0; i < batch; i++) {
        field[i] = (float) (-50 * random.nextDouble());
      }
    }
    return values;
  }
}
