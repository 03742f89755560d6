package org.tensorcache.actors.coordinator;

import java.util.BitSet;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.CacheProgress;
import org.tensorcache.actors.coordinator.CoordinatorState.Event;
import org.tensorcache.actors.coordinator.CoordinatorState.RangeLost;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;

/**
 * The coordinator's restore at start: segments are listed and read by a {@link SegmentRestorer}
 * child on the I/O dispatcher; each verified block goes back into the local replica, and what the
 * journal must learn from it (a range lost, or a segment it did not know of) comes back as an event
 * for the coordinator to persist.
 */
final class Restoration<C> {
  private final ActorContext<C> ctx;
  private final TensorCacheNode node;
  private final Coverage coverage;
  private final ReplicaWriter<C> writer;
  private final ActorRef<SegmentRestorer.Restore> restorer;
  private final int round;

  /**
   * A restoration for the coordinator's incarnation {@code round}: its restorer child is its own (a
   * restart stops the children), and replies to an earlier round's restorer are ignored.
   */
  Restoration(
      ActorContext<C> ctx, TensorCacheNode node, Coverage coverage, ReplicaWriter<C> w, int round) {
    this.ctx = ctx;
    this.node = node;
    this.coverage = coverage;
    this.writer = w;
    this.round = round;
    // listing and reading segments blocks: it runs on the I/O dispatcher, not the actor's thread
    this.restorer =
        ctx.spawn(
            SegmentRestorer.create(node.ioExecutor(), node.metrics()),
            "segment-restorer-" + round,
            DispatcherSelector.fromConfig("tensorcache.io-dispatcher"));
  }

  /**
   * Has every segment of {@code d} that the journal or the directory knows of read back and
   * checked, answering to {@code replyTo}; until then the recorded ranges do not count as persisted
   * in the status.
   */
  void start(
      CacheDefinition d, CacheProgress progress, ActorRef<SegmentRestorer.Restored> replyTo) {
    BitSet recorded = BitSet.valueOf(progress.persisted());
    recorded.stream().forEach(r -> coverage.verifying(d.cacheId(), r));
    restorer.tell(new SegmentRestorer.Restore(d, recorded, round, replyTo));
  }

  /** Takes a checked segment; returns the event to persist, or null when there is none. */
  Event restored(CoordinatorState state, SegmentRestorer.Restored r) {
    if (r.round() != round) {
      return null; // read for an earlier incarnation: this one reads the segment again
    }
    if (r.range() == SegmentRestorer.UNLISTED) {
      // nothing is known lost: restart, recover the journal and list again
      throw new IllegalStateException(
          "segments of " + r.cacheId() + " cannot be listed", r.failure());
    }
    if (r.range() == SegmentRestorer.DONE) {
      coverage.restored(r.cacheId());
      return null;
    }
    boolean persisted = state.progress(r.cacheId()).isPersisted(r.range());
    coverage.verified(r.cacheId(), r.range()); // a lost range is no longer persisted either
    if (r.failure() != null || r.block() == null) {
      Throwable cause =
          r.failure() == null
              ? new IllegalStateException("segment of range " + r.range() + " is missing")
              : r.failure().getCause() != null ? r.failure().getCause() : r.failure();
      if (r.failure() != null) { // truncated, corrupt or foreign: recomputed, never served
        coverage.rejected(r.cacheId(), r.range());
        node.metrics().segmentRejected(r.cacheId());
      }
      ctx.getLog()
          .warn(
              "range {} of {} not restored, it will be computed again: {}",
              r.range(),
              r.cacheId(),
              cause.getMessage());
      return persisted
          ? new RangeLost(r.cacheId(), r.range(), String.valueOf(cause.getMessage()))
          : null;
    }
    writer.write(r.cacheId(), r.block(), node.byReference(r.cacheId()), Replicator.writeLocal());
    return persisted ? null : new RangePersisted(r.cacheId(), r.range());
  }
}
