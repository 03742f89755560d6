package org.tensorcache.bench.tiers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * A trainer's loop over a session (one rank, world size 1): {@code next()} per step, then a fixed
 * sleep for the step's training, which a trainer on a GPU spends waiting for the device. Only the
 * {@code next()} calls are timed; every step's values are checked after its timing.
 */
public final class TrainerLoop {
  /**
   * The least warm-up steps of a loop, on top of its warm-up time: on a loaded machine a second of
   * steps was a few dozen, before the JIT had compiled the session's path.
   */
  static final int MIN_WARM_UP_STEPS = 100;

  /** The least warm-up steps of a loop of {@code warmUpNanos}: none beyond the first without. */
  static int minWarmUpSteps(long warmUpNanos) {
    return warmUpNanos > 0 ? MIN_WARM_UP_STEPS : 1;
  }

  private TrainerLoop() {}

  /**
   * What a loop measured.
   *
   * @param timings the timed steps ({@code next()}, or the data path of {@link DataPath})
   * @param afterFirst the cache's statistics after the first step
   * @param end the statistics after the last step
   * @param warmUpSteps steps run before the timed ones (the first included)
   * @param nextStep the step after the last one run
   * @param timedIndices the indices of the timed steps, in order
   * @param peakBytesHeld the node's hot tier peak (blocks and prefetched rows) at the end
   * @param budgetBytes the node's hot-tier budget
   */
  public record Result(
      Timings timings,
      TierStats.Snapshot afterFirst,
      TierStats.Snapshot end,
      int warmUpSteps,
      long nextStep,
      List<long[]> timedIndices,
      long peakBytesHeld,
      long budgetBytes) {
    /** Where the values of every step after the first came from. */
    public Hits afterFirstStep() {
      return Hits.between(afterFirst, end);
    }

    /** The mean prefetch lead in steps of the prefetches after the first step, NaN if none. */
    public double meanPrefetchLead() {
      long count = end.prefetches() - afterFirst.prefetches();
      return count == 0
          ? Double.NaN
          : (double) (end.prefetchStepsSum() - afterFirst.prefetchStepsSum()) / count;
    }

    /** The figures for a results file. */
    public Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>(timings.toMap());
      m.put("warm_up_steps", warmUpSteps);
      m.put("hits_after_first_step", afterFirstStep().toMap());
      double lead = meanPrefetchLead();
      m.put("mean_prefetch_lead_steps", Double.isNaN(lead) ? null : Stats.round1(lead));
      m.put("prefetches", end.prefetches() - afterFirst.prefetches());
      // hot-tier changes of the cache after the first step: ranges promoted, evicted, and refused
      // for want of room that no reservation held
      m.put("admissions", end.admissions() - afterFirst.admissions());
      m.put("evictions", end.evictions() - afterFirst.evictions());
      m.put("rejections", end.rejections() - afterFirst.rejections());
      m.put("peak_bytes_held", peakBytesHeld);
      m.put("budget_bytes", budgetBytes);
      return m;
    }
  }

  /**
   * Runs {@code runId}'s session over {@code cacheId}: steps for at least {@code warmUpNanos} (the
   * JIT's warm-up; and {@link #MIN_WARM_UP_STEPS} unless that is 0), then {@code steps} timed ones,
   * each followed by {@code trainNanos} of sleep.
   */
  public static Result run(
      TensorCacheClient client,
      HotTier hot,
      String cacheId,
      PlainArray reference,
      String runId,
      int batch,
      int steps,
      long trainNanos,
      long warmUpNanos) {
    SessionClient session = client.session(cacheId, runId, 0, 1, 7, batch);
    step(session, reference, runId);
    TierStats.Snapshot afterFirst = hot.stats(cacheId).snapshot();
    int warmUp = 1;
    for (long end = System.nanoTime() + warmUpNanos;
        System.nanoTime() < end || warmUp < minWarmUpSteps(warmUpNanos); ) {
      LockSupport.parkNanos(trainNanos);
      step(session, reference, runId);
      warmUp++;
    }
    long[] nanos = new long[steps];
    List<long[]> indices = new ArrayList<>(steps);
    for (int s = 0; s < steps; s++) {
      LockSupport.parkNanos(trainNanos);
      long t0 = System.nanoTime();
      TrainingBatch b = session.next();
      nanos[s] = System.nanoTime() - t0;
      reference.check(runId + " step " + b.step(), b.indices(), b.values().shorts("features"));
      indices.add(b.indices());
    }
    return new Result(
        Timings.of(nanos),
        afterFirst,
        hot.stats(cacheId).snapshot(),
        warmUp,
        warmUp + steps,
        indices,
        hot.peakBytesHeld(),
        hot.budgetBytes());
  }

  /** The id under which the session of {@code runId}, rank 0, prefetches. */
  public static String sessionId(String runId) {
    return TrainerSession.entityId(runId, 0);
  }

  private static void step(SessionClient session, PlainArray reference, String runId) {
    TrainingBatch b = session.next();
    reference.check(runId + " step " + b.step(), b.indices(), b.values().shorts("features"));
  }
}
