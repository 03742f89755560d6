package org.tensorcache.actors.client;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupChecks;
import org.tensorcache.actors.lookup.LookupFailedException;
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
  private static final NodeMetrics.LookupPath MEMBER = NodeMetrics.LookupPath.MEMBER;
  private final ActorSystem<?> system;
  private final TensorCacheNode node;
  private final LocalLookup lookup;

  private TensorCacheClient(ActorSystem<?> system) {
    this.system = system;
    this.node = TensorCacheNode.get(system);
    this.lookup = LocalLookup.get(system);
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
    CacheSpec spec = lookup.spec(cacheId);
    var config = new RunConfig(spec.n(), seed, globalBatch, cacheId);
    return new SessionClient(
            this,
            system,
            TrainerSession.entityRef(system, runId, rank),
            cacheId,
            node.settings().lookupTimeout())
        .open(config, worldSize, rank);
  }

  /**
   * The values of {@code indices}, blocking until every one is there or the lookup fails (a {@link
   * LookupFailedException}); bad input is an {@link IllegalArgumentException} that names it.
   */
  public Batch lookup(String cacheId, long[] indices) {
    Batch batch = newBatch(cacheId, indices);
    lookup.lookupInto(cacheId, indices, batch.values(), MEMBER);
    return batch;
  }

  /**
   * Like {@link #lookup}, into the caller's arrays ({@code out[f]} needs {@code indices.length *
   * width} elements of the field's dtype: {@code float[]} for F32, {@code short[]} of bit patterns
   * for F16 and BF16, {@code int[]} for I32, {@code long[]} for I64; {@link Batch#newValues}), so
   * that a trainer can reuse its batch buffers: a warm lookup then allocates nothing. On failure
   * {@code out} may hold part of the values.
   */
  public void lookupInto(String cacheId, long[] indices, Object[] out) {
    lookup.lookupInto(cacheId, indices, out, MEMBER);
  }

  /** The values of {@code indices}; completes exceptionally with the reason when it cannot. */
  public CompletionStage<Batch> lookupAsync(String cacheId, long[] indices) {
    Batch batch = newBatch(cacheId, indices);
    return lookup
        .lookupIntoAsync(cacheId, indices, batch.values(), MEMBER)
        .thenApply(done -> batch);
  }

  /** The node's lookup path, which sessions prefetch through. */
  LocalLookup local() {
    return lookup;
  }

  private Batch newBatch(String cacheId, long[] indices) {
    try {
      CacheSpec spec = lookup.spec(cacheId);
      LookupChecks.checkSize(cacheId, indices, node.settings());
      return new Batch(spec, indices, LookupChecks.newValues(spec, indices.length));
    } catch (IllegalArgumentException e) {
      node.metrics().lookupFailed(MEMBER, NodeMetrics.FailureReason.BAD_REQUEST);
      throw e;
    }
  }
}
