package org.tensorcache.store;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/** Specs, fingerprints and deterministic blocks shared by the store's tests. */
public final class Fixtures {
  /** Values a generated block draws from besides ordinary floats. */
  public static final float[] SPECIAL =
      new float[] {
        Float.NEGATIVE_INFINITY,
        Float.POSITIVE_INFINITY,
        -0.0f,
        0.0f,
        Float.MIN_VALUE,
        -Float.MAX_VALUE
      };

  private Fixtures() {}

  /** A cache of 1000 examples in ranges of 300 (the last one 100), two scalars and a vector. */
  public static CacheSpec spec() {
    return new CacheSpec(
        "dpo-ref",
        1000,
        List.of(
            FieldSpec.scalar("chosen_logp"),
            FieldSpec.scalar("rejected_logp"),
            FieldSpec.vector("features", 3)),
        300);
  }

  /** The fingerprint of {@code spec} under a fixed runner, weights and dataset. */
  public static Fingerprint fingerprint(CacheSpec spec) {
    return fingerprint(spec, "weights-sha256:aa11");
  }

  /** The fingerprint of {@code spec} with the given weights digest. */
  public static Fingerprint fingerprint(CacheSpec spec, String weightsDigest) {
    return Fingerprint.of(
        new FingerprintInputs(
            "reference-logprob",
            "1",
            weightsDigest,
            "dataset-sha256:bb22",
            Map.of("max_len", "128"),
            spec));
  }

  /**
   * A block of {@code range} with about {@code percentPresent}% of examples present, values drawn
   * from {@link #SPECIAL} and ordinary floats by a generator seeded with {@code seed}.
   */
  public static Block block(CacheSpec spec, int range, long seed, int percentPresent) {
    SplittableRandom random = new SplittableRandom(seed);
    Block b = Block.empty(spec, range);
    for (long i = b.start(); i < b.start() + b.length(); i++) {
      if (random.nextInt(100) < percentPresent) {
        float[][] row = new float[spec.fields().size()][];
        for (int f = 0; f < row.length; f++) {
          row[f] = new float[spec.fields().get(f).width()];
          for (int k = 0; k < row[f].length; k++) {
            row[f][k] =
                random.nextInt(4) == 0
                    ? SPECIAL[random.nextInt(SPECIAL.length)]
                    : (float) (random.nextDouble() * 20 - 10);
          }
        }
        b.put(i, row);
      }
    }
    return b;
  }
}
