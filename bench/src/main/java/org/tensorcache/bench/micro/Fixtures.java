package org.tensorcache.bench.micro;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/** Specs, blocks and lookup replies shared by the micro benchmarks and their checks. */
final class Fixtures {
  private Fixtures() {}

  /**
   * A one-range cache of N examples: {@code logp-N} has the reference-logprob layout (two scalar
   * fields), {@code features-N} one {@code [128]} field.
   */
  static CacheSpec spec(String layout) {
    int dash = layout.lastIndexOf('-');
    int length = Integer.parseInt(layout.substring(dash + 1));
    List<FieldSpec> fields =
        layout.startsWith("logp-")
            ? List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"))
            : List.of(FieldSpec.vector("features", 128));
    return new CacheSpec("micro", length, fields, length);
  }

  /** Floats in the range of {@code layout}, all fields. */
  static long floats(String layout) {
    CacheSpec spec = spec(layout);
    return (long) spec.rangeLength(0) * spec.fields().stream().mapToInt(FieldSpec::width).sum();
  }

  /** Range 0 of {@code spec} with every example present and seeded log-prob-like values. */
  static Block full(CacheSpec spec, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int length = spec.rangeLength(0);
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = logps(length * spec.fields().get(f).width(), random);
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

  /**
   * A reply of {@code batch} indices drawn uniformly from the demo's 20,000 examples, with two
   * float fields as in the DPO cache, held as a node holds them: an {@code Object[]} of arrays.
   */
  static LookupActor.Values reply(int batch) {
    SplittableRandom random = new SplittableRandom(1);
    long[] indices = new long[batch];
    for (int i = 0; i < batch; i++) {
      indices[i] = random.nextLong(20_000);
    }
    random = new SplittableRandom(2);
    return new LookupActor.Values(
        indices, new Object[] {logps(batch, random), logps(batch, random)});
  }

  private static float[] logps(int n, SplittableRandom random) {
    float[] values = new float[n];
    for (int k = 0; k < n; k++) {
      values[k] = (float) (-50 * random.nextDouble());
    }
    return values;
  }
}
