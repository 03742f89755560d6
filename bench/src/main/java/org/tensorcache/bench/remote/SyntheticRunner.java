package org.tensorcache.bench.remote;

import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.spec.FieldSpec;

/**
 * A runner whose two fields are a pure function of the example index: the fill costs nothing, and a
 * client in another process can check every value it is served without asking the server.
 */
final class SyntheticRunner implements ModelRunner {
  static final List<FieldSpec> FIELDS =
      List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));

  @Override
  public String id() {
    return "bench-synthetic-logprob";
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
    return "none";
  }

  @Override
  public Map<String, String> parameters() {
    return Map.of();
  }

  @Override
  public RunnerOutput run(List<PreferenceExample> batch) {
    long[] indices = new long[batch.size()];
    float[][][] values = new float[2][batch.size()][];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = batch.get(i).index();
      values[0][i] = new float[] {chosen(indices[i])};
      values[1][i] = new float[] {rejected(indices[i])};
    }
    return RunnerOutput.validated(id(), FIELDS, indices, values);
  }

  @Override
  public void close() {}

  /** The chosen_logp of {@code index}: a log-probability-like negative number. */
  static float chosen(long index) {
    return -((mix(index) >>> 40) / 65536f);
  }

  /** The rejected_logp of {@code index}, another stream of the same mix. */
  static float rejected(long index) {
    return -((mix(index ^ 0x5DEECE66DL) >>> 40) / 65536f);
  }

  // SplitMix64's finaliser: neighbouring indices get unrelated values, so a shifted or swapped
  // reply cannot pass the check by accident
  private static long mix(long x) {
    long z = x + 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
