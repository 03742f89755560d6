package org.tensorcache.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.spec.FieldSpec;

/**
 * A runner whose values are a hash of the example index, so that a benchmark measures the cache and
 * not a model: {@code chosen_logp} and {@code rejected_logp} as scalar floats in {@code (-64, 0]},
 * checked by {@link RunnerOutput#validated} like any runner's output.
 */
public final class SyntheticRunner implements ModelRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "synthetic-hash";

  public static final List<FieldSpec> FIELDS =
      List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));

  private final long seed;

  /** A runner whose values depend on {@code seed} and the example index only. */
  public SyntheticRunner(long seed) {
    this.seed = seed;
  }

  /** The value of field {@code field} (0 chosen, 1 rejected) of example {@code index}. */
  public static float value(long seed, int field, long index) {
    long h = mix(seed * 0x9E3779B97F4A7C15L + index * 2 + field);
    // 24 bits of the hash: exactly representable as a float, never NaN
    return -((h >>> 40) / (float) (1 << 18));
  }

  /** The seed of this runner's values. */
  public long seed() {
    return seed;
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String version() {
    return "1";
  }

  @Override
  public List<FieldSpec> fields() {
    return FIELDS;
  }

  @Override
  public String weightsDigest() {
    // there are no weights: the digest names the function and its seed
    return sha256(ID + " seed=" + seed);
  }

  @Override
  public Map<String, String> parameters() {
    return Map.of("seed", Long.toString(seed));
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    int b = batch.size();
    long[] indices = new long[b];
    float[][][] values = new float[FIELDS.size()][b][];
    for (int i = 0; i < b; i++) {
      long index = batch.get(i).index();
      indices[i] = index;
      for (int f = 0; f < FIELDS.size(); f++) {
        values[f][i] = new float[] {value(seed, f, index)};
      }
    }
    return RunnerOutput.validated(ID, FIELDS, indices, values);
  }

  @Override
  public void close() {}

  /** SplitMix64's finalizer: every input bit changes about half of the output bits. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  public static String sha256(String text) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
