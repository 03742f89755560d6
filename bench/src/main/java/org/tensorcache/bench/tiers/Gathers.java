package org.tensorcache.bench.tiers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * Lookups outside a session, into reused arrays ({@code lookupInto}, which allocates nothing when
 * every value is in memory): random batches, and the batches of a trainer's order next to a gather
 * of the same rows from the plain array. Every batch is checked after its timing.
 */
public final class Gathers {
  private Gathers() {}

  /**
   * {@code rounds} timed lookups of {@code batch} random indices of {@code n} after at least {@code
   * warmUpNanos} of the same; returns their timings and where the timed values came from.
   */
  public static Map<String, Object> random(
      TensorCacheClient client,
      HotTier hot,
      CacheDefinition cache,
      PlainArray reference,
      int n,
      int batch,
      int rounds,
      long warmUpNanos) {
    String cacheId = cache.cacheId();
    SplittableRandom random = new SplittableRandom(11);
    long[] indices = new long[batch];
    Object[] out = Batch.newValues(cache.spec(), batch);
    long[] nanos = new long[rounds];
    TierStats.Snapshot before = null;
    long warmEnd = System.nanoTime() + warmUpNanos;
    for (int round = -1; round < rounds; round++) {
      if (round == 0) {
        before = hot.stats(cacheId).snapshot();
      }
      for (int i = 0; i < batch; i++) {
        indices[i] = random.nextInt(n);
      }
      long t0 = System.nanoTime();
      client.lookupInto(cacheId, indices, out);
      long t = System.nanoTime() - t0;
      reference.check("random lookup", indices, (short[]) out[0]);
      if (round >= 0) {
        nanos[round] = t;
      } else if (System.nanoTime() < warmEnd) {
        round--; // warm-up until its time is over
      }
    }
    Map<String, Object> m = new LinkedHashMap<>(Timings.of(nanos).toMap());
    m.put("hits", Hits.between(before, hot.stats(cacheId).snapshot()).toMap());
    m.put("peak_bytes_held", hot.peakBytesHeld());
    m.put("budget_bytes", hot.budgetBytes());
    return m;
  }

  /**
   * The batches of {@code order} looked up with {@code lookupInto} and gathered from the plain
   * array, interleaved batch by batch so that both see the same moments of a noisy machine, after
   * at least {@code warmUpNanos} of both; returns the timings of the lookups and of the array.
   */
  public static Timings[] againstArray(
      TensorCacheClient client,
      CacheDefinition cache,
      PlainArray reference,
      List<long[]> order,
      long warmUpNanos) {
    String cacheId = cache.cacheId();
    int batch = order.get(0).length;
    Object[] out = Batch.newValues(cache.spec(), batch);
    short[] plain = new short[((short[]) out[0]).length];
    long[] lookups = new long[order.size()];
    long[] array = new long[order.size()];
    long warmEnd = System.nanoTime() + warmUpNanos;
    for (boolean warm = true; ; warm = System.nanoTime() < warmEnd) {
      for (int b = 0; b < order.size(); b++) {
        long[] indices = order.get(b);
        long t0 = System.nanoTime();
        client.lookupInto(cacheId, indices, out);
        long t1 = System.nanoTime();
        reference.gather(indices, plain);
        long t2 = System.nanoTime();
        reference.check("trainer-order lookup", indices, (short[]) out[0]);
        reference.check("plain array gather", indices, plain);
        lookups[b] = t1 - t0;
        array[b] = t2 - t1;
      }
      if (!warm) {
        return new Timings[] {Timings.of(lookups), Timings.of(array)};
      }
    }
  }

  /**
   * Looks every index up in order, pass after pass, until a pass reads nothing from a mapped
   * segment or the shard (every range promoted to the hot tier); returns the passes it took.
   */
  public static int promoteAll(
      TensorCacheClient client, HotTier hot, CacheDefinition cache, int batch, int maxPasses)
      throws InterruptedException {
    String cacheId = cache.cacheId();
    int n = (int) cache.spec().n();
    Object[] out = Batch.newValues(cache.spec(), batch);
    for (int pass = 1; pass <= maxPasses; pass++) {
      TierStats.Snapshot before = hot.stats(cacheId).snapshot();
      for (int from = 0; from < n; from += batch) {
        long[] indices = new long[Math.min(batch, n - from)];
        for (int i = 0; i < indices.length; i++) {
          indices[i] = from + i;
        }
        Object[] into =
            indices.length == batch ? out : Batch.newValues(cache.spec(), indices.length);
        client.lookupInto(cacheId, indices, into);
      }
      Hits hits = Hits.between(before, hot.stats(cacheId).snapshot());
      if (hits.warm() == 0 && hits.cold() == 0) {
        return pass;
      }
      Thread.sleep(100); // promotions run in the background, a few at a time
    }
    throw new IllegalStateException(
        "cache '" + cacheId + "' not all hot after " + maxPasses + " passes over every index");
  }
}
