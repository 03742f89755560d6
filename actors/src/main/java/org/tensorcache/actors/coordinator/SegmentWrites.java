package org.tensorcache.actors.coordinator;

import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.store.block.Block;

/**
 * The segments the coordinator writes, for ranges whose values are gossiped: one write at a time
 * per range, on the I/O dispatcher, and a range counts as persisted only once its write is durable.
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

  SegmentWrites(ActorContext<C> ctx, TensorCacheNode node, Done<C> done) {
    this.ctx = ctx;
    this.node = node;
    this.done = done;
  }

  /** Writes the segment of a complete block, unless one is being written for its range. */
  void write(String cacheId, Block block) {
    if (!writing.add(RangeId.of(cacheId, block.range()))) {
      return;
    }
    ctx.pipeToSelf(
        SegmentIo.write(node.definition(cacheId), block, node.ioExecutor(), node.metrics()),
        (ok, failure) -> done.of(cacheId, block.range(), failure));
  }

  /** A write ended: the event to persist when it is durable, else null (it is tried again). */
  RangePersisted written(String cacheId, int range, Throwable failure) {
    writing.remove(RangeId.of(cacheId, range));
    if (failure != null) {
      ctx.getLog()
          .error("segment of range {} of {} not written: {}", range, cacheId, failure.toString());
      return null;
    }
    node.metrics().rangePersisted(cacheId, node.definition(cacheId).spec().rangeLength(range));
    return new RangePersisted(cacheId, range);
  }
}
