package org.tensorcache.actors.client;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.lookup.BatchRequest;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.replica.ReplicaView;
import org.tensorcache.actors.session.RunConfig;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The trainer's API to the cache, on a cluster node that holds a replica: a lookup is a gather from
 * the local replica on the caller's thread; only indices not computed yet go through the cluster.
 * Bad input (unknown cache, index out of range, oversized batch) is an {@link
 * IllegalArgumentException} that names it; nothing in the cluster changes.
 */
public final class TensorCacheClient {
  private final ActorSystem<?> system;
  private final TensorCacheNode node;
  private final ReplicaView view;
  private final ActorRef<LookupActor.Command> lookup;

  private TensorCacheClient(ActorSystem<?> system) {
    this.system = system;
    this.node = TensorCacheNode.get(system);
    this.view = node.view();
    this.lookup =
        system.systemActorOf(
            LookupActor.create(), "tensorcache-client-" + UUID.randomUUID(), Props.empty());
  }

  /** A client on {@code system}, a node whose caches are registered. */
  public static TensorCacheClient create(ActorSystem<?> system) {
    return new TensorCacheClient(system);
  }

  /**
   * The session of rank {@code rank} of run {@code runId}: a constant global batch of {@code
   * globalBatch} examples per step split over {@code worldSize} ranks, in a seeded order of the
   * cache's examples. Opening it again with another world size changes it at the next step.
   *
   * @throws SessionFailedException if the session did not answer the open
   */
  public SessionClient session(
      String cacheId, String runId, int rank, int worldSize, long seed, int globalBatch) {
    CacheSpec spec = view.spec(cacheId);
    var config = new RunConfig(spec.n(), seed, globalBatch, cacheId);
    return new SessionClient(
            this,
            system,
            TrainerSession.entityRef(system, runId, rank),
            cacheId,
            node.settings().lookupTimeout())
        .open(config, worldSize, rank);
  }

  /** The values of {@code indices}, blocking until every one is there or the lookup fails. */
  public Batch lookup(String cacheId, long[] indices) {
    Batch batch = newBatch(cacheId, indices);
    lookupInto(cacheId, indices, batch.values());
    return batch;
  }

  /**
   * Like {@link #lookup}, into the caller's arrays ({@code out[f]} needs {@code indices.length *
   * width} floats per field), so that a trainer can reuse its batch buffers: a warm lookup then
   * allocates nothing. On failure {@code out} may hold part of the values.
   */
  public void lookupInto(String cacheId, long[] indices, float[][] out) {
    Local local = gather(cacheId, indices, out);
    if (local.missing().length == 0) {
      return; // the common case: a memory gather on this thread, no future
    }
    Duration timeout = node.settings().lookupTimeout().plusSeconds(1);
    try {
      fetchMissing(cacheId, local)
          .toCompletableFuture()
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new LookupFailedException(cause.getMessage(), cause);
    } catch (TimeoutException e) {
      throw new LookupFailedException(
          "lookup of " + indices.length + " indices of cache '" + cacheId + "' timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LookupFailedException("interrupted", e);
    }
  }

  /** The values of {@code indices}; completes exceptionally with the reason when it cannot. */
  public CompletionStage<Batch> lookupAsync(String cacheId, long[] indices) {
    Batch batch = newBatch(cacheId, indices);
    Local local = gather(cacheId, indices, batch.values());
    return local.missing().length == 0
        ? CompletableFuture.completedFuture(batch)
        : fetchMissing(cacheId, local).thenApply(done -> batch);
  }

  /** A request and the positions of it that the local replica does not hold yet. */
  private record Local(long[] indices, float[][] out, CacheSpec spec, int[] missing) {}

  private Batch newBatch(String cacheId, long[] indices) {
    CacheSpec spec = view.spec(cacheId);
    BatchRequest.checkSize(cacheId, indices, node.settings());
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[indices.length * spec.fields().get(f).width()];
    }
    return new Batch(spec, indices, values);
  }

  private Local gather(String cacheId, long[] indices, float[][] out) {
    CacheSpec spec = view.spec(cacheId);
    BatchRequest.checkSize(cacheId, indices, node.settings());
    checkBuffers(cacheId, spec, indices.length, out);
    return new Local(indices, out, spec, view.gather(cacheId, indices, out));
  }

  static void checkBuffers(String cacheId, CacheSpec spec, int count, float[][] out) {
    if (out == null || out.length != spec.fields().size()) {
      throw new IllegalArgumentException(
          String.format(
              "%s output arrays for cache '%s', expected one per field %s",
              out == null ? "no" : Integer.toString(out.length), cacheId, spec.fields()));
    }
    for (int f = 0; f < out.length; f++) {
      int need = count * spec.fields().get(f).width();
      if (out[f] == null || out[f].length < need) {
        throw new IllegalArgumentException(
            String.format(
                "output array of field '%s' holds %s floats, expected at least %d",
                spec.fields().get(f).name(), out[f] == null ? "no" : out[f].length, need));
      }
    }
  }

  /** Asks the cluster for the missing positions and fills them into the request's arrays. */
  private CompletionStage<Void> fetchMissing(String cacheId, Local local) {
    int[] missing = local.missing();
    long[] wanted = new long[missing.length];
    for (int m = 0; m < wanted.length; m++) {
      wanted[m] = local.indices()[missing[m]];
    }
    return AskPattern.<LookupActor.Command, LookupActor.Batch>askWithStatus(
            lookup,
            replyTo -> new LookupActor.GetBatch(cacheId, wanted, replyTo),
            node.settings().lookupTimeout().plusMillis(500),
            system.scheduler())
        .handle(
            (computed, failure) -> {
              if (failure != null) {
                throw new LookupFailedException(failure.getMessage(), failure);
              }
              for (int f = 0; f < local.out().length; f++) {
                int width = local.spec().fields().get(f).width();
                for (int m = 0; m < wanted.length; m++) {
                  System.arraycopy(
                      computed.values()[f], m * width, local.out()[f], missing[m] * width, width);
                }
              }
              return null;
            });
  }
}
