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
   */
  public SessionClient session(
      String cacheId, String runId, int rank, int worldSize, long seed, int globalBatch) {
    CacheSpec spec = view.spec(cacheId);
    var config = new TrainerSession.RunConfig(spec.n(), seed, globalBatch, cacheId);
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
    Local local = gather(cacheId, indices);
    if (local.missingCount() == 0) {
      return local.batch(); // the common case: a memory gather on this thread, no future
    }
    Duration timeout = node.settings().lookupTimeout().plusSeconds(1);
    try {
      return fetchMissing(cacheId, local)
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
    Local local = gather(cacheId, indices);
    return local.missingCount() == 0
        ? CompletableFuture.completedFuture(local.batch())
        : fetchMissing(cacheId, local);
  }

  /** What the local replica holds of a request; {@code missing} lists the other positions. */
  private record Local(Batch batch, int[] missing, int missingCount) {}

  private Local gather(String cacheId, long[] indices) {
    CacheSpec spec = view.spec(cacheId);
    BatchRequest.check(cacheId, spec, indices, node.settings());
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[indices.length * spec.fields().get(f).width()];
    }
    int[] missing = new int[indices.length];
    int count = view.gather(cacheId, indices, values, missing);
    return new Local(new Batch(spec, indices, values), missing, count);
  }

  /** Asks the cluster for the missing positions and fills them into the batch. */
  private CompletionStage<Batch> fetchMissing(String cacheId, Local local) {
    Batch batch = local.batch();
    long[] wanted = new long[local.missingCount()];
    for (int m = 0; m < wanted.length; m++) {
      wanted[m] = batch.indices()[local.missing()[m]];
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
              for (int f = 0; f < batch.values().length; f++) {
                int width = batch.spec().fields().get(f).width();
                for (int m = 0; m < wanted.length; m++) {
                  System.arraycopy(
                      computed.values()[f],
                      m * width,
                      batch.values()[f],
                      local.missing()[m] * width,
                      width);
                }
              }
              return batch;
            });
  }
}
