package org.tensorcache.bench.tiers;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.store.tier.TierStats;

/**
 * A trainer's steps (rank 0 of a world of 1), each after a sleep for its training, as a trainer on
 * a GPU waits for the device; every step's values are checked after its timing. Through a session
 * ({@code next()} timed), then through the calls {@code SessionClient.next()} makes once the
 * session has answered (prefetch of the next steps, the step's prefetched rows or else a lookup)
 * without the session: its reply, an event journaled per step, takes most of a step's time.
 */
public final class TrainerLoop {
  // the least warm-up steps of a loop with warm-up time: on a loaded machine a second of steps was
  // a few dozen, before the JIT had compiled the session's path
  private static final int MIN_WARM_UP_STEPS = 100;

  /**
   * The values a cache served between two snapshots of its statistics: {@code hot} from hot blocks
   * (or prefetched rows that were ready), {@code warm} from mapped segments, {@code cold} from the
   * range's shard (or a prefetched step still being fetched).
   */
  public record Hits(long hot, long warm, long cold) {
    static Hits between(TierStats.Snapshot before, TierStats.Snapshot after) {
      return new Hits(
          after.hotHits() - before.hotHits(),
          after.warmHits() - before.warmHits(),
          after.coldHits() - before.coldHits());
    }

    /** The hot share of every value served, NaN when none was. */
    @JsonProperty("hot_share")
    public double hotShare() {
      return Stats.round((double) hot / (hot + warm + cold), 4);
    }
  }

  /**
   * What a loop measured: its timed steps; the steps before them (the first included); after the
   * first step, where the values came from, the mean prefetch lead in steps (none without
   * prefetches), the prefetches and the cache's ranges promoted, evicted, and refused for want of
   * room no reservation held; the node's hot-tier peak (blocks and prefetched rows) and budget.
   */
  @JsonNaming(SnakeCaseStrategy.class)
  public record Result(
      @JsonUnwrapped Timings timings,
      int warmUpSteps,
      Hits hitsAfterFirstStep,
      Double meanPrefetchLeadSteps,
      long prefetches,
      long admissions,
      long evictions,
      long rejections,
      long peakBytesHeld,
      long budgetBytes,
      @JsonIgnore List<long[]> timedIndices) {}

  @JsonNaming(SnakeCaseStrategy.class)
  public record Loops(Result sessionNext, Result dataPath) {}

  private final EmbeddedNodes node;
  private final String cacheId;
  private final PlainArray reference;
  private final TierConfig c;
  private final List<long[]> timed = new ArrayList<>();
  private long step;
  private TrainingBatch batch;
  private long[] indices;
  private short[] values;
  private TierStats.Snapshot afterFirst;

  private TrainerLoop(EmbeddedNodes node, String cacheId, PlainArray reference, TierConfig c) {
    this.node = node;
    this.cacheId = cacheId;
    this.reference = reference;
    this.c = c;
  }

  public static Loops run(
      EmbeddedNodes node, CacheDefinition cache, PlainArray reference, String run, TierConfig c)
      throws Exception {
    String cacheId = cache.cacheId();
    TrainerLoop s = new TrainerLoop(node, cacheId, reference, c);
    SessionClient session = node.client(0).session(cacheId, run, 0, 1, 7, c.batch());
    Result next =
        s.time(TrainerSession.entityId(run, 0), Rounds.NOTHING, i -> s.batch = session.next());
    TrainerLoop p = new TrainerLoop(node, cacheId, reference, c);
    String id = run + "-data-path";
    Sampler sampler = Sampler.of(cache.spec().n(), 9, c.batch(), 1);
    LocalLookup local = node.lookup(0);
    TensorCacheClient client = node.client(0);
    local.prefetch(id, cacheId, sampler, 0, 0); // as a session's open does
    Rounds.Step step =
        i -> {
          local.prefetch(id, cacheId, sampler, 0, p.step + 1);
          Object[] ahead = local.takePrefetched(id, p.step, p.indices);
          p.values =
              ahead != null
                  ? (short[]) ahead[0]
                  : client.lookup(cacheId, p.indices).shorts("features");
        };
    return new Loops(next, p.time(id, r -> p.indices = sampler.indices(p.step, 0), step));
  }

  /**
   * The steps of session {@code id}, {@code call} timed: the first, the warm-up, the timed ones.
   * Then gives back what it holds for the rows prefetched beyond the last step: a trainer that
   * stops keeps them reserved until idle for a minute, leaving the next measurement on the node a
   * smaller budget. A take with other indices than the step's releases its rows unserved.
   */
  private Result time(String id, Rounds.Step before, Rounds.Step call) throws Exception {
    var hot = node.hot(0);
    Timings t =
        Timings.of(
            Rounds.time(
                c.warmsUp() ? MIN_WARM_UP_STEPS : 1,
                c.warmUpNanos(),
                c.timedSteps(),
                1,
                r -> {
                  if (step > 0) {
                    LockSupport.parkNanos((long) (c.trainMsPerStep() * 1e6));
                  }
                  before.run(r);
                },
                r -> {
                  if (batch != null) { // a session's step
                    indices = batch.indices();
                    values = batch.values().shorts("features");
                  }
                  reference.check(id + " step " + step, indices, values);
                  if (++step == 1) {
                    afterFirst = hot.stats(cacheId).snapshot();
                  }
                  if (r >= 0) {
                    timed.add(indices);
                  }
                },
                call))[0];
    TierStats.Snapshot end = hot.stats(cacheId).snapshot();
    long prefetches = end.prefetches() - afterFirst.prefetches();
    double lead = (double) (end.prefetchStepsSum() - afterFirst.prefetchStepsSum()) / prefetches;
    Result result =
        new Result(
            t,
            (int) step - c.timedSteps(),
            Hits.between(afterFirst, end),
            prefetches == 0 ? null : Stats.round1(lead),
            prefetches,
            end.admissions() - afterFirst.admissions(),
            end.evictions() - afterFirst.evictions(),
            end.rejections() - afterFirst.rejections(),
            hot.peakBytesHeld(),
            hot.budgetBytes(),
            timed);
    for (long s = step; s < step + c.prefetchSteps(); s++) {
      node.lookup(0).takePrefetched(id, s, new long[0]);
    }
    return result;
  }
}
