package org.tensorcache.bench;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;

/**
 * A trainer's lookup of B random indices from the warm near replica, next to gathering the same
 * indices from two plain {@code float[]} in the same JVM (the physical limit), interleaved: {@code
 * lookupInto} fills reused arrays as the array gather does, {@code lookup} allocates a new batch.
 */
final class LookupBench {
  /**
   * The least warm-up per batch size, for all three paths: a quarter of the rounds alone, a few
   * tens of ms, left a loaded machine's quick run measuring the lookup path's first-tier code.
   */
  private static final long WARM_UP_NANOS = 2_000_000_000L;

  private LookupBench() {}

  static List<Map<String, Object>> run(
      TensorCacheClient client, String cacheId, int n, RunSize size) throws Exception {
    Batch everything = client.lookup(cacheId, LongStream.range(0, n).toArray());
    float[] chosen = everything.floats("chosen_logp");
    float[] rejected = everything.floats("rejected_logp");
    Table table =
        new Table("lookups of B random indices next to a gather from float[], us")
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
      long[] indices = new long[b];
      float[][] gathered = {new float[b], new float[b]};
      float[][] reused = {new float[b], new float[b]};
      Batch[] batch = {null};
      double[] sink = {0};
      Rounds t =
          Rounds.time(
              rounds / 4,
              size.pick(WARM_UP_NANOS, WARM_UP_NANOS, 0),
              rounds,
              1,
              round -> { // the last round's values summed, so that none of the three can be dropped
                sink[0] += gathered[0][b - 1] + gathered[1][0] + reused[1][0];
                sink[0] += batch[0] == null ? 0 : ((float[]) batch[0].values()[0])[b - 1];
                for (int i = 0; i < b; i++) {
                  indices[i] = random.nextInt(n);
                }
              },
              Rounds.NOTHING,
              i -> batch[0] = client.lookup(cacheId, indices),
              i -> {
                for (int j = 0; j < b; j++) {
                  int at = (int) indices[j];
                  gathered[0][j] = chosen[at];
                  gathered[1][j] = rejected[at];
                }
              },
              i -> client.lookupInto(cacheId, indices, reused));
      double a50 = t.at(1, 0.5) / 1e3;
      table.row(
          b,
          rounds,
          t.warmUpRounds(),
          t.at(2, 0.5) / 1e3,
          t.at(2, 0.99) / 1e3,
          t.at(0, 0.5) / 1e3,
          t.at(0, 0.99) / 1e3,
          a50,
          t.at(1, 0.99) / 1e3,
          t.at(2, 0.5) / 1e3 / a50,
          t.at(0, 0.5) / 1e3 / a50,
          b == 256 ? " (targets at B=256: into <= 2, lookup <= 3)" : null,
          sink[0]);
    }
    return table.print();
  }
}
