package org.tensorcache.actors.lookup;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * Brings the values of a trainer session's next steps into memory before the trainer asks for them:
 * the indices of every step are a pure function of the session's configuration ({@link Sampler}),
 * so what comes next is known exactly. It fetches rows, not whole ranges: a step of a shuffled
 * epoch touches nearly one range per row, so ranges would not fit a budget ten times smaller than
 * the cache, while a step's rows do. The rows of a step hold their bytes of the hot tier's budget
 * ({@link HotTier#reserve}, never evicted) until the step is served; a session that goes quiet for
 * {@link #IDLE_NANOS} gives them back, so a trainer that died holds nothing for long.
 */
final class Prefetcher {
  /** A session not heard of for this long loses what it prefetched. */
  static final long IDLE_NANOS = 60_000_000_000L;

  /** Fetches the values of {@code indices} into {@code out}, as a lookup does. */
  interface Fetch {
    CompletionStage<Void> fetch(String cacheId, long[] indices, Object[] out);
  }

  private final HotTier hot;
  private final Fetch fetch;
  private final int steps;
  private final long maxWaitMillis;
  private final Map<String, Ahead> sessions = new ConcurrentHashMap<>();

  Prefetcher(HotTier hot, Fetch fetch, int steps, long maxWaitMillis) {
    this.hot = hot;
    this.fetch = fetch;
    this.steps = steps;
    this.maxWaitMillis = maxWaitMillis;
  }

  /**
   * Prefetches steps {@code from} to {@code from + steps - 1} of rank {@code rank} of the session
   * {@code session} (those not fetched yet), after it served {@code from - 1}; stops where the
   * budget has no room left.
   */
  void ahead(String session, String cacheId, CacheSpec spec, Sampler sampler, int rank, long from) {
    if (steps == 0) {
      return;
    }
    dropIdle();
    Ahead a = sessions.computeIfAbsent(session, s -> new Ahead(cacheId));
    synchronized (a) {
      a.lastUsed = System.nanoTime();
      a.served = from - 1;
      for (long step = from; step < from + steps; step++) {
        if (a.steps.containsKey(step)) {
          continue; // fetched at an earlier step
        }
        long[] indices;
        try {
          indices = sampler.indices(step, rank);
        } catch (IllegalArgumentException outsideTheWorld) {
          break; // the rank has no share of that step (a smaller world)
        }
        long bytes = (long) indices.length * LookupChecks.rowBytes(spec);
        if (!hot.reserve(bytes)) {
          break; // no room: the rest comes when steps are served
        }
        Prefetched p = new Prefetched(indices, LookupChecks.newValues(spec, indices.length), bytes);
        a.steps.put(step, p);
        fetch
            .fetch(cacheId, indices, p.values)
            .whenComplete((done, failure) -> a.finished(p, failure == null));
      }
    }
  }

  /**
   * The prefetched values of {@code step} when they are those of {@code indices}, waiting for a
   * fetch still running (it finishes no later than a fresh lookup would); null when the step was
   * not prefetched or its fetch failed. Counts the step's rows as hot hits when they were ready.
   */
  Object[] take(String session, long step, long[] indices) {
    Ahead a = sessions.get(session);
    if (a == null) {
      return null;
    }
    Prefetched p;
    synchronized (a) {
      a.lastUsed = System.nanoTime();
      p = a.steps.remove(step);
    }
    if (p == null) {
      return null;
    }
    try {
      boolean ready = p.done.isDone();
      boolean ok = p.done.get(maxWaitMillis, TimeUnit.MILLISECONDS);
      if (!ok || !Arrays.equals(p.indices, indices)) {
        return null;
      }
      TierStats stats = hot.stats(a.cacheId);
      stats.hit(ready ? Tier.HOT : Tier.COLD, indices.length);
      stats.recordPrefetchLead(ready ? Math.max(0, step - p.readyAfter) : 0);
      return p.values;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return null;
    } finally {
      hot.release(p.bytes); // the values are the trainer's now, or dropped
    }
  }

  /** Whether the rows of {@code step} of the session are fetched and waiting to be taken. */
  boolean ready(String session, long step) {
    Ahead a = sessions.get(session);
    if (a == null) {
      return false;
    }
    synchronized (a) {
      Prefetched p = a.steps.get(step);
      return p != null && p.done.isDone();
    }
  }

  /** Gives back what sessions not heard of for {@link #IDLE_NANOS} prefetched. */
  private void dropIdle() {
    long now = System.nanoTime();
    sessions.forEach(
        (id, a) -> {
          synchronized (a) {
            if (now - a.lastUsed > IDLE_NANOS && sessions.remove(id, a)) {
              a.steps.values().forEach(p -> hot.release(p.bytes));
              a.steps.clear();
            }
          }
        });
  }

  /** The rows of one step, being fetched or fetched. */
  private static final class Prefetched {
    final long[] indices;
    final Object[] values;
    final long bytes;
    final CompletableFuture<Boolean> done = new CompletableFuture<>();
    long readyAfter; // the step the session had served when these were ready

    Prefetched(long[] indices, Object[] values, long bytes) {
      this.indices = indices;
      this.values = values;
      this.bytes = bytes;
    }
  }

  /** One session's prefetched steps. */
  private static final class Ahead {
    final String cacheId;
    final Map<Long, Prefetched> steps = new HashMap<>();
    long served = -1;
    long lastUsed = System.nanoTime();

    Ahead(String cacheId) {
      this.cacheId = cacheId;
    }

    synchronized void finished(Prefetched p, boolean ok) {
      p.readyAfter = served;
      p.done.complete(ok);
    }
  }
}
