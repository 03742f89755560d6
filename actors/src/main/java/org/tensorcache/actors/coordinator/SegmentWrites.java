package org.tensorcache.actors.coordinator;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.cache.WriteBackoff;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.store.block.Block;

/**
 * The segments the coordinator writes, for ranges whose values are gossiped: one write at a time
 * per range, on the I/O dispatcher, and a range counts as persisted only once its write is durable.
 * A failed write is tried again by a later tick once its range's {@link WriteBackoff} allows.
 */
final class SegmentWrites<C> {
  /** Wraps the outcome of a write (failure null when it is durable) for the coordinator. */
  interface Done<C> {
    C of(String cacheId, int range, Throwable failure);
  }

  private final ActorContext<C> ctx;
  private final TensorCacheNode node;
  private final Done<C> done;
  private final Set<RangeId> writing = new HashSet<>();
  private final Map<RangeId, WriteBackoff> failed = new HashMap<>();

  SegmentWrites(ActorContext<C> ctx, TensorCacheNode node, Done<C> done) {
    this.ctx = ctx;
    this.node = node;
    this.done = done;
  }

  /**
   * Writes the segment of a complete block, unless one is being written for its range or its last
   * write failed less than its backoff ago.
   */
  void write(String cacheId, Block block) {
    RangeId id = RangeId.of(cacheId, block.range());
    WriteBackoff backoff = failed.get(id);
    if ((backoff != null && !backoff.due()) || !writing.add(id)) {
      return;
    }
    ctx.pipeToSelf(
        SegmentIo.write(node.definition(cacheId), block, node.ioExecutor(), node.metrics()),
        (ok, failure) -> done.of(cacheId, block.range(), failure));
  }

  /**
   * A write ended: the event to persist when it is durable, else null (it is tried again after its
   * backoff).
   */
  RangePersisted written(String cacheId, int range, Throwable failure) {
    RangeId id = RangeId.of(cacheId, range);
    writing.remove(id);
    if (failure != null) {
      WriteBackoff backoff = failed.computeIfAbsent(id, k -> WriteBackoff.of(node.settings()));
      long retryMs = backoff.failed().toMillis();
      ctx.getLog()
          .error(
              "segment of range {} of {} not written ({} in a row, tried again in {} ms): {}",
              range,
              cacheId,
              backoff.failures(),
              retryMs,
              failure.toString());
      return null;
    }
    failed.remove(id);
    node.metrics().rangePersisted(cacheId, node.definition(cacheId).spec().rangeLength(range));
    return new RangePersisted(cacheId, range);
  }
}
