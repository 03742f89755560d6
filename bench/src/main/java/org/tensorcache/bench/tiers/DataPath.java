package org.tensorcache.bench.tiers;

import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * A trainer's steps in the order of a session, through the same calls as {@code
 * SessionClient.next()} once the session has answered (prefetch of the next steps, then the step's
 * prefetched rows or else a lookup), without the session itself: its reply, an event written to the
 * journal per step, takes most of a step's time, and this shows what the tiers cost apart from it.
 * The indices come from the session's own {@link Sampler}, outside the timing, as {@code next()}
 * has them in the session's reply.
 */
public final class DataPath {
  private DataPath() {}

  /**
   * Runs steps of rank 0 of a world of 1 for at least {@code warmUpNanos}, then {@code steps} timed
   * ones, each after {@code trainNanos} of sleep; results as a {@link TrainerLoop}'s.
   */
  public static TrainerLoop.Result run(
      LocalLookup local,
      TensorCacheClient client,
      HotTier hot,
      CacheDefinition cache,
      PlainArray reference,
      String id,
      int batch,
      int steps,
      long trainNanos,
      long warmUpNanos) {
    String cacheId = cache.cacheId();
    Sampler sampler = Sampler.of(cache.spec().n(), 9, batch, 1);
    local.prefetch(id, cacheId, sampler, 0, 0); // as a session's open does
    long step = 0;
    step(local, client, sampler, cache, reference, id, step++);
    TierStats.Snapshot afterFirst = hot.stats(cacheId).snapshot();
    for (long end = System.nanoTime() + warmUpNanos;
        System.nanoTime() < end || step < TrainerLoop.minWarmUpSteps(warmUpNanos); ) {
      LockSupport.parkNanos(trainNanos);
      step(local, client, sampler, cache, reference, id, step++);
    }
    int warmUp = (int) step;
    long[] nanos = new long[steps];
    for (int s = 0; s < steps; s++) {
      LockSupport.parkNanos(trainNanos);
      nanos[s] = step(local, client, sampler, cache, reference, id, step++);
    }
    return new TrainerLoop.Result(
        Timings.of(nanos),
        afterFirst,
        hot.stats(cacheId).snapshot(),
        warmUp,
        step,
        List.of(),
        hot.peakBytesHeld(),
        hot.budgetBytes());
  }

  /**
   * Gives back the budget that session {@code id} holds for the rows it prefetched ahead of {@code
   * next}, the step after its last: a trainer that stops keeps them reserved until it has been idle
   * for a minute, which would leave the next measurement on the node a smaller budget. A take with
   * other indices than the step's releases the step's rows without serving or counting them.
   */
  public static void giveBack(LocalLookup local, String id, long next, int steps) {
    for (long s = next; s < next + steps; s++) {
      local.takePrefetched(id, s, new long[0]);
    }
  }

  /** One step; returns the nanoseconds of its data path, its values checked afterwards. */
  private static long step(
      LocalLookup local,
      TensorCacheClient client,
      Sampler sampler,
      CacheDefinition cache,
      PlainArray reference,
      String id,
      long step) {
    long[] indices = sampler.indices(step, 0);
    long t0 = System.nanoTime();
    local.prefetch(id, cache.cacheId(), sampler, 0, step + 1);
    Object[] ahead = local.takePrefetched(id, step, indices);
    short[] values =
        ahead != null
            ? (short[]) ahead[0]
            : client.lookup(cache.cacheId(), indices).shorts("features");
    long t = System.nanoTime() - t0;
    reference.check(id + " step " + step, indices, values);
    return t;
  }
}
