package org.tensorcache.actors.lookup;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.CacheRegistry;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.fields.RaggedValues;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The one lookup path of a node that holds a replica, used by the member client and the lookup port
 * alike: check the request, gather what the replica holds on the caller's thread, ask the node's
 * {@link LookupActor} for the rest, and scatter its answer into place. A lookup is complete or an
 * error, never a sentinel.
 */
public final class LocalLookup implements Extension {
  private final ActorSystem<?> system;
  private final NodeSettings settings;
  private final TensorCacheNode node;
  private final ActorRef<LookupActor.Command> actor;
  private final Prefetcher prefetcher;
  private final RowLookup rows;

  private LocalLookup(ActorSystem<?> system) {
    this.system = system;
    TensorCacheNode node = TensorCacheNode.get(system);
    this.settings = node.settings();
    this.node = node;
    this.rows = new RowLookup(system, node);
    this.actor = system.systemActorOf(LookupActor.create(), LookupActor.NAME, Props.empty());
    this.prefetcher =
        new Prefetcher(
            node.hotTier(),
            // off the trainer's thread: it should not wait for the reads of the steps ahead
            (cacheId, indices, out) ->
                CompletableFuture.supplyAsync(
                        () -> gather(node.registry().get(cacheId), indices, out, false),
                        node.ioExecutor())
                    .thenCompose(
                        g ->
                            g.missing.length == 0
                                ? CompletableFuture.completedFuture(null)
                                : fetchMissing(g, false)),
            node.memory().prefetchSteps(),
            settings.lookupMaxWait().toMillis());
  }

  /** The node's local lookup (its lookup actor starts with it). */
  public static LocalLookup get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /** The node's lookup actor, which also serves members and processes that hold no replica. */
  public ActorRef<LookupActor.Command> actor() {
    return actor;
  }

  /** The spec of a cache this node knows, or an error naming the known caches. */
  public CacheSpec spec(String cacheId) {
    return node.definition(cacheId).spec();
  }

  /**
   * The inputs a cache this node knows was filled from (sorted, empty when none were recorded), or
   * an error naming the known caches.
   */
  public Map<String, String> inputs(String cacheId) {
    return node.registry().definition(cacheId).inputs();
  }

  /** The actor system of the node. */
  public ActorSystem<?> system() {
    return system;
  }

  /** The settings lookups are bounded by. */
  public NodeSettings settings() {
    return settings;
  }

  /**
   * Fills {@code out} (per field, {@code indices.length * width} elements of its dtype) with the
   * values of {@code indices}, blocking until every one is there. Bad input is an {@link
   * IllegalArgumentException} that names it; a lookup the cluster could not serve is a {@link
   * LookupFailedException}. On failure {@code out} may hold part of the values.
   */
  public void lookupInto(String cacheId, long[] indices, Object[] out) {
    CacheRegistry.Registered cache = checkInto(cacheId, indices, out);
    int[] missing = cache.replication().gather(cache, indices, out, true);
    if (missing.length > 0) { // the common case gathers on this thread and needs nothing more
      await(new Gathered(cache, indices, out, missing));
    }
  }

  /**
   * The values of {@code indices} in new arrays (per field, {@code indices.length * width} elements
   * of its dtype), as {@link #lookupInto} would fill them: for a caller that keeps no arrays of its
   * own, such as the lookup port.
   */
  public Object[] lookup(String cacheId, long[] indices) {
    CacheRegistry.Registered cache = node.registry().get(cacheId);
    LookupChecks.checkSize(cacheId, indices, settings);
    Object[] values = LookupChecks.newValues(cache.definition().spec(), indices.length);
    int[] missing = cache.replication().gather(cache, indices, values, true);
    if (missing.length > 0) {
      await(new Gathered(cache, indices, values, missing));
    }
    return values;
  }

  /** The values of {@code indices} of a per-token cache, complete or an error. */
  public RaggedValues lookupRows(String cacheId, long[] indices) {
    LookupChecks.checkSize(cacheId, indices, settings);
    return rows.lookup(node.definition(cacheId), indices);
  }

  /** Waits for the missing part of {@code g} to be computed and written into place. */
  private void await(Gathered g) {
    Duration wait = settings.lookupMaxWait().plusSeconds(1);
    try {
      fetchMissing(g, true).toCompletableFuture().get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new LookupFailedException(cause.getMessage(), cause);
    } catch (TimeoutException e) {
      throw new LookupFailedException(
          String.format(
              "lookup of %d indices of cache '%s' not answered within %d ms",
              g.indices().length, g.cacheId(), wait.toMillis()),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LookupFailedException("interrupted while the lookup was computed", e);
    }
  }

  /** Like {@link #lookupInto}, counted and timed in the node's metrics under {@code path}. */
  public void lookupInto(
      String cacheId, long[] indices, Object[] out, NodeMetrics.LookupPath path) {
    long started = System.nanoTime();
    try {
      lookupInto(cacheId, indices, out);
    } catch (RuntimeException e) {
      node.metrics().lookupFailed(path, NodeMetrics.FailureReason.of(e));
      throw e;
    }
    node.metrics().lookupServed(path, started);
  }

  /** Like {@link #lookupIntoAsync}, counted and timed in the node's metrics under {@code path}. */
  public CompletionStage<Void> lookupIntoAsync(
      String cacheId, long[] indices, Object[] out, NodeMetrics.LookupPath path) {
    long started = System.nanoTime();
    CompletionStage<Void> done;
    try {
      done = lookupIntoAsync(cacheId, indices, out);
    } catch (RuntimeException e) {
      node.metrics().lookupFailed(path, NodeMetrics.FailureReason.of(e));
      throw e;
    }
    return done.whenComplete(
        (ok, failure) -> {
          if (failure == null) {
            node.metrics().lookupServed(path, started);
          } else {
            node.metrics().lookupFailed(path, NodeMetrics.FailureReason.of(failure));
          }
        });
  }

  /** The node's metrics, which the lookup port records its connections in. */
  public NodeMetrics metrics() {
    return node.metrics();
  }

  /**
   * Like {@link #lookupInto}, without blocking: completes when {@code out} holds every value, or
   * exceptionally with the reason. Bad input still throws at once.
   */
  public CompletionStage<Void> lookupIntoAsync(String cacheId, long[] indices, Object[] out) {
    Gathered g = gather(checkInto(cacheId, indices, out), indices, out, true);
    return g.missing.length == 0 ? CompletableFuture.completedFuture(null) : fetchMissing(g, true);
  }

  /**
   * A trainer session on this node served step {@code from - 1}: for a cache replicated by
   * reference, brings the ranges of its next steps into the hot tier ({@code
   * tensorcache.prefetch.steps} of them) and keeps them there until they are served.
   *
   * @param session the session's id, unique per run and rank
   */
  public void prefetch(String session, String cacheId, Sampler sampler, int rank, long from) {
    CacheDefinition d = node.definition(cacheId);
    if (d.spec().perToken()) {
      rows.prefetch(d, sampler, rank, from, node.memory().prefetchSteps());
      return;
    }
    node.replication(cacheId)
        .prefetch(() -> prefetcher.ahead(session, cacheId, spec(cacheId), sampler, rank, from));
  }

  /**
   * The values of step {@code step} of the session if they were prefetched (the arrays are the
   * caller's then), else null: look them up as usual.
   */
  public Object[] takePrefetched(String session, long step, long[] indices) {
    return prefetcher.take(session, step, indices);
  }

  /**
   * Whether the values of step {@code step} of the session are prefetched and in memory, so that
   * asking for the step takes them without a read.
   */
  public boolean isPrefetched(String session, long step) {
    return prefetcher.ready(session, step);
  }

  /** A request and the positions of it that the local replica does not hold yet. */
  private record Gathered(
      CacheRegistry.Registered cache, long[] indices, Object[] out, int[] missing) {
    String cacheId() {
      return cache.definition().cacheId();
    }
  }

  /**
   * The checks of a caller's request and arrays, made once, before anything is gathered; returns
   * the cache asked for.
   */
  private CacheRegistry.Registered checkInto(String cacheId, long[] indices, Object[] out) {
    CacheRegistry.Registered cache = node.registry().get(cacheId);
    LookupChecks.checkSize(cacheId, indices, settings);
    LookupChecks.checkBuffers(cacheId, cache.definition().spec(), indices.length, out);
    return cache;
  }

  /**
   * The local part of a checked request; {@code count}: whether it counts in the tier statistics.
   * An index out of range is still an error here, found as the gather reads it.
   */
  private Gathered gather(
      CacheRegistry.Registered cache, long[] indices, Object[] out, boolean count) {
    int[] missing = cache.replication().gather(cache, indices, out, count);
    return new Gathered(cache, indices, out, missing);
  }

  /** Asks the lookup actor for the missing positions and scatters them into place. */
  private CompletionStage<Void> fetchMissing(Gathered g, boolean count) {
    int[] missing = g.missing();
    long[] wanted = new long[missing.length];
    for (int m = 0; m < wanted.length; m++) {
      wanted[m] = g.indices()[missing[m]];
    }
    return AskPattern.<LookupActor.Command, LookupActor.Values>askWithStatus(
            actor,
            replyTo -> LookupActor.computeMissing(g.cacheId(), wanted, replyTo),
            settings.lookupMaxWait().plusMillis(500),
            system.scheduler())
        .handle(
            (found, failure) -> {
              if (failure != null) {
                throw new LookupFailedException(failure.getMessage(), failure);
              }
              if (count) {
                g.cache().replication().servedCold(g.cacheId(), missing.length);
              }
              LookupQuery.scatter(g.cache().definition().spec(), found.values(), missing, g.out());
              return null;
            });
  }

  private static final class Id extends ExtensionId<LocalLookup> {
    static final Id INSTANCE = new Id();

    @Override
    public LocalLookup createExtension(ActorSystem<?> system) {
      return new LocalLookup(system);
    }
  }
}
