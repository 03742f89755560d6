package org.tensorcache.actors.shard;

import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.Replication;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.cache.WriteBackoff;
import org.tensorcache.store.block.Block;

/**
 * A shard's segment: read as the shard starts, and, when the cache's {@link Replication} has the
 * shard write it (only the shard holds the values), written once the range is complete; the shard
 * then reports it (and again on every fill, in case the report was missed) to whoever the node
 * passed to {@link ShardActor#init}. A write that failed is tried again after a {@link
 * WriteBackoff}: nobody else holds the values to write.
 */
final class ShardSegment<C> {
  private final ActorContext<C> ctx;
  private final CacheDefinition cache;
  private final int range;
  private final TensorCacheNode node;
  private final boolean writes;
  private final Function<Throwable, C> written;
  private final ActorRef<ShardActor.RangeWritten> reports;
  private final C retry;
  private final WriteBackoff backoff;
  private boolean writing;
  private boolean done;

  /**
   * {@code written} wraps the outcome of a write (null when it succeeded) for the shard; {@code
   * retry} is sent to the shard when a failed write may be tried again (it calls {@link
   * #writeIfComplete}).
   */
  ShardSegment(
      ActorContext<C> ctx,
      CacheDefinition cache,
      int range,
      TensorCacheNode node,
      Replication replication,
      Function<Throwable, C> written,
      C retry,
      ActorRef<ShardActor.RangeWritten> reports) {
    this.ctx = ctx;
    this.retry = retry;
    this.backoff = WriteBackoff.of(node.settings());
    this.reports = reports;
    this.cache = cache;
    this.range = range;
    this.node = node;
    this.writes = replication.shardWritesSegment();
    this.written = written;
  }

  /**
   * Reads the range's segment on the I/O dispatcher, when there is one: a range persisted before a
   * cold start may not be back in the replicas yet, and what a verified segment holds is never
   * computed again.
   */
  void read(java.util.function.BiFunction<Block, Throwable, C> checked) {
    ctx.pipeToSelf(SegmentIo.read(cache, range, node.ioExecutor(), node.metrics()), checked::apply);
  }

  /** The block {@link #read} found (null when none or unusable); a complete one needs no write. */
  Block verified(Block block, Throwable failure) {
    if (failure != null) {
      node.metrics().segmentRejected(cache.cacheId());
      ctx.getLog()
          .warn(
              "segment of range {} of {} not used: {}",
              range,
              cache.cacheId(),
              failure.getMessage());
      return null;
    }
    done = block != null && block.isComplete();
    return block;
  }

  /** A fill was asked for: the report that the segment is written may have been missed. */
  void fillAsked() {
    if (done) {
      report();
    }
  }

  /**
   * Writes the segment on the I/O dispatcher when this shard writes it and {@code current} is
   * complete and not written.
   */
  void writeIfComplete(Block current) {
    if (!writes || !current.isComplete() || writing || done || !backoff.due()) {
      return;
    }
    writing = true;
    ctx.pipeToSelf(
        SegmentIo.write(cache, current.copy(), node.ioExecutor(), node.metrics()),
        (ok, failure) -> written.apply(failure));
  }

  /** The write ended: {@code failure} is null when the segment is durable. */
  void onWritten(Throwable failure) {
    writing = false;
    if (failure != null) {
      java.time.Duration delay = backoff.failed();
      ctx.getLog()
          .error(
              "segment of range {} of {} not written ({} in a row, tried again in {} ms): {}",
              range,
              cache.cacheId(),
              backoff.failures(),
              delay.toMillis(),
              failure.toString());
      ctx.scheduleOnce(delay, ctx.getSelf(), retry);
      return;
    }
    backoff.succeeded();
    done = true;
    node.metrics().rangePersisted(cache.cacheId(), cache.spec().rangeLength(range));
    report();
  }

  private void report() {
    reports.tell(new ShardActor.RangeWritten(cache.cacheId(), range));
  }
}
