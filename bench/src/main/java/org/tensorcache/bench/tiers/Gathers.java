package org.tensorcache.bench.tiers;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.tiers.TrainerLoop.Hits;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * Lookups outside a session into reused arrays ({@code lookupInto}, which allocates nothing when
 * every value is in memory): random batches, and a trainer's batches next to the plain array's
 * gather of the same rows. Every batch is checked after its timing.
 */
public final class Gathers {
  private Gathers() {}

  /** Random lookups: their timings, where the values came from, the node's hot-tier peak. */
  @JsonNaming(SnakeCaseStrategy.class)
  public record Random(
      @JsonUnwrapped Timings timings, Hits hits, long peakBytesHeld, long budgetBytes) {}

  public static Random random(
      EmbeddedNodes node, CacheDefinition cache, PlainArray reference, TierConfig c)
      throws Exception {
    HotTier hot = node.hot(0);
    TensorCacheClient client = node.client(0);
    SplittableRandom random = new SplittableRandom(11);
    long[] indices = new long[c.batch()];
    Object[] out = Batch.newValues(cache.spec(), c.batch());
    TierStats.Snapshot[] before = new TierStats.Snapshot[1];
    Timings t =
        Timings.of(
            Rounds.time(
                1,
                c.warmUpNanos(),
                c.randomRounds(),
                1,
                r -> {
                  before[0] = r == 0 ? hot.stats(cache.cacheId()).snapshot() : before[0];
                  for (int i = 0; i < indices.length; i++) {
                    indices[i] = random.nextInt(c.examples());
                  }
                },
                r -> reference.check("random lookup", indices, (short[]) out[0]),
                i -> client.lookupInto(cache.cacheId(), indices, out)))[0];
    Hits hits = Hits.between(before[0], hot.stats(cache.cacheId()).snapshot());
    return new Random(t, hits, hot.peakBytesHeld(), hot.budgetBytes());
  }

  /**
   * The batches of {@code order} with {@code lookupInto} and from the plain array, after at least a
   * pass and the warm-up time: the timings of the lookups and of the array.
   */
  public static Timings[] againstArray(
      EmbeddedNodes node,
      CacheDefinition cache,
      PlainArray reference,
      List<long[]> order,
      TierConfig c)
      throws Exception {
    Object[] out = Batch.newValues(cache.spec(), order.get(0).length);
    short[] plain = new short[((short[]) out[0]).length];
    long[][] indices = new long[1][];
    int[] next = {0};
    TensorCacheClient client = node.client(0);
    return Timings.of(
        Rounds.time(
            order.size(),
            c.warmUpNanos(),
            order.size(),
            1,
            r -> indices[0] = order.get(next[0]++ % order.size()),
            r -> {
              reference.check("trainer-order lookup", indices[0], (short[]) out[0]);
              reference.check("plain array gather", indices[0], plain);
            },
            i -> client.lookupInto(cache.cacheId(), indices[0], out),
            i -> reference.gather(indices[0], plain)));
  }

  /**
   * Looks every index up in order, pass after pass, until a pass reads nothing from a mapped
   * segment or the shard (every range promoted to the hot tier); returns the passes it took.
   */
  public static int promoteAll(EmbeddedNodes node, CacheDefinition cache, int batch)
      throws InterruptedException {
    HotTier hot = node.hot(0);
    TensorCacheClient client = node.client(0);
    int n = (int) cache.spec().n();
    for (int pass = 1; pass <= 200; pass++) {
      TierStats.Snapshot before = hot.stats(cache.cacheId()).snapshot();
      for (int from = 0; from < n; from += batch) {
        long[] indices = LongStream.range(from, Math.min(n, from + batch)).toArray();
        client.lookupInto(cache.cacheId(), indices, Batch.newValues(cache.spec(), indices.length));
      }
      Hits hits = Hits.between(before, hot.stats(cache.cacheId()).snapshot());
      if (hits.warm() == 0 && hits.cold() == 0) {
        return pass;
      }
      Thread.sleep(100); // promotions run in the background, a few at a time
    }
    throw new IllegalStateException(cache.cacheId() + " not all hot after 200 passes");
  }
}
