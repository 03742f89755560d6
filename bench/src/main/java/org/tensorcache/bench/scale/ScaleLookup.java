package org.tensorcache.bench.scale;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.report.Stats;

/**
 * A trainer's lookup of {@link #BATCH} random indices from the warm near replica ({@code lookup},
 * and {@code lookupInto} the caller's reused arrays), next to the same gather from two plain {@code
 * float[]} of all {@code n} values in the same loop (the physical limit at this {@code n}); every
 * value looked up is checked against the synthetic runner's.
 */
final class ScaleLookup {
  static final int BATCH = 256;

  private ScaleLookup() {}

  static Map<String, Object> run(TensorCacheClient client, String cacheId, int n, int rounds) {
    float[] chosen = new float[n];
    float[] rejected = new float[n];
    for (int i = 0; i < n; i++) {
      chosen[i] = SyntheticRunner.value(ScaleCaches.SEED, 0, i);
      rejected[i] = SyntheticRunner.value(ScaleCaches.SEED, 1, i);
    }
    SplittableRandom random = new SplittableRandom(n);
    long[] cache = new long[rounds];
    long[] into = new long[rounds];
    long[] array = new long[rounds];
    float[][] buffers = {new float[BATCH], new float[BATCH]};
    long[] indices = new long[BATCH];
    long[] other = new long[BATCH]; // lookupInto's: not the lines lookup just brought to cache
    float[] outChosen = new float[BATCH];
    float[] outRejected = new float[BATCH];
    long wrong = 0;
    for (int round = -rounds / 4; round < rounds; round++) {
      for (int i = 0; i < BATCH; i++) {
        indices[i] = random.nextInt(n);
        other[i] = random.nextInt(n);
      }
      long t0 = System.nanoTime();
      Batch batch = client.lookup(cacheId, indices);
      long t1 = System.nanoTime();
      for (int i = 0; i < BATCH; i++) {
        int at = (int) indices[i];
        outChosen[i] = chosen[at];
        outRejected[i] = rejected[at];
      }
      long t2 = System.nanoTime();
      client.lookupInto(cacheId, other, buffers);
      long t3 = System.nanoTime();
      // the check also keeps the JIT from dropping either gather
      float[] c = batch.floats("chosen_logp");
      float[] r = batch.floats("rejected_logp");
      for (int i = 0; i < BATCH; i++) {
        wrong += Float.floatToRawIntBits(c[i]) != Float.floatToRawIntBits(outChosen[i]) ? 1 : 0;
        wrong += Float.floatToRawIntBits(r[i]) != Float.floatToRawIntBits(outRejected[i]) ? 1 : 0;
        int at = (int) other[i];
        wrong +=
            Float.floatToRawIntBits(buffers[0][i]) != Float.floatToRawIntBits(chosen[at]) ? 1 : 0;
        wrong +=
            Float.floatToRawIntBits(buffers[1][i]) != Float.floatToRawIntBits(rejected[at]) ? 1 : 0;
      }
      if (round >= 0) { // the first quarter warms the JIT up
        cache[round] = t1 - t0;
        array[round] = t2 - t1;
        into[round] = t3 - t2;
      }
    }
    Arrays.sort(cache);
    Arrays.sort(into);
    Arrays.sort(array);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("batch", BATCH);
    row.put("rounds", rounds);
    row.put("cache_p50_us", Stats.round2(cache[rounds / 2] / 1e3));
    row.put("cache_p99_us", Stats.round2(cache[(int) (rounds * 0.99)] / 1e3));
    row.put("into_p50_us", Stats.round2(into[rounds / 2] / 1e3));
    row.put("into_p99_us", Stats.round2(into[(int) (rounds * 0.99)] / 1e3));
    row.put("array_p50_us", Stats.round2(array[rounds / 2] / 1e3));
    row.put("array_p99_us", Stats.round2(array[(int) (rounds * 0.99)] / 1e3));
    row.put("p50_ratio", Stats.round2((double) cache[rounds / 2] / Math.max(1, array[rounds / 2])));
    row.put("values_checked", (long) (rounds + rounds / 4) * BATCH * 4);
    row.put("values_wrong", wrong);
    return row;
  }
}
