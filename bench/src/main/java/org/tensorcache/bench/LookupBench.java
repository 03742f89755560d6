package org.tensorcache.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;

/**
 * A trainer's lookup of B random indices from the warm near replica, next to gathering the same
 * indices from two plain {@code float[]} in the same JVM (the physical limit), interleaved. Both
 * ways are measured: {@code lookupInto} fills reused arrays as the array gather does, {@code
 * lookup} allocates a new batch each time.
 */
final class LookupBench {
  /**
   * The least warm-up per batch size, for all three paths alike. A quarter of the rounds alone is a
   * few tens of milliseconds, and on a loaded machine the optimizing compiler had not compiled the
   * lookup path by then: a quick run measured its first-tier code.
   */
  private static final long WARM_UP_NANOS = 2_000_000_000L;

  private LookupBench() {}

  static List<Map<String, Object>> run(
      TensorCacheClient client, String cacheId, int n, RunSize size) {
    long[] all = new long[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    Batch everything = client.lookup(cacheId, all);
    float[] chosen = everything.floats("chosen_logp");
    float[] rejected = everything.floats("rejected_logp");
    Table table =
        new Table(null)
            .col("batch", "B", "%6d")
            .json("rounds")
            .json("warm_up_rounds")
            .col("into_p50_us", "into p50us", "%12.2f")
            .col("into_p99_us", "into p99us", "%12.2f")
            .col("cache_p50_us", "lookup p50us", "%12.2f")
            .col("cache_p99_us", "lookup p99us", "%12.2f")
            .col("array_p50_us", "array p50us", "%12.2f")
            .col("array_p99_us", "array p99us", "%12.2f")
            .col("p50_ratio", "into/array", "%11.2f") // lookupInto next to the array gather
            .col("allocating_p50_ratio", "lookup/array", "%13.2f")
            .col("targets", "", "%s")
            .json("checksum");
    for (int b : new int[] {32, 256, 4096}) {
      int rounds = size.pick(10_000, 2_000, 40) * 32 / Math.max(32, b / 8);
      SplittableRandom random = new SplittableRandom(b);
      long[] cache = new long[rounds];
      long[] into = new long[rounds];
      long[] array = new long[rounds];
      float[][] reused = {new float[b], new float[b]};
      long[] indices = new long[b];
      float[] outChosen = new float[b];
      float[] outRejected = new float[b];
      double sink = 0;
      long warmEnd = System.nanoTime() + size.pick(WARM_UP_NANOS, WARM_UP_NANOS, 0);
      int warmUpRounds = 0;
      for (int round = -rounds / 4; round < rounds; round++) {
        for (int i = 0; i < b; i++) {
          indices[i] = random.nextInt(n);
        }
        long t0 = System.nanoTime();
        Batch batch = client.lookup(cacheId, indices);
        long t1 = System.nanoTime();
        for (int i = 0; i < b; i++) {
          int at = (int) indices[i];
          outChosen[i] = chosen[at];
          outRejected[i] = rejected[at];
        }
        long t2 = System.nanoTime();
        client.lookupInto(cacheId, indices, reused);
        long t3 = System.nanoTime();
        sink +=
            ((float[]) batch.values()[0])[b - 1] + outChosen[b - 1] + outRejected[0] + reused[1][0];
        if (round >= 0) { // the first quarter, and at least WARM_UP_NANOS, warm the JIT up
          cache[round] = t1 - t0;
          array[round] = t2 - t1;
          into[round] = t3 - t2;
        } else {
          warmUpRounds++;
          if (round == -1 && System.nanoTime() < warmEnd) {
            round--; // the same three paths again until the warm-up time is over
          }
        }
      }
      Arrays.sort(cache);
      Arrays.sort(array);
      Arrays.sort(into);
      double a50 = array[rounds / 2] / 1e3;
      table.row(
          b,
          rounds,
          warmUpRounds,
          into[rounds / 2] / 1e3,
          into[(int) (rounds * 0.99)] / 1e3,
          cache[rounds / 2] / 1e3,
          cache[(int) (rounds * 0.99)] / 1e3,
          a50,
          array[(int) (rounds * 0.99)] / 1e3,
          into[rounds / 2] / 1e3 / a50,
          cache[rounds / 2] / 1e3 / a50,
          b == 256 ? " (targets at B=256: into <= 2, lookup <= 3)" : null,
          sink);
    }
    return table.print();
  }
}
