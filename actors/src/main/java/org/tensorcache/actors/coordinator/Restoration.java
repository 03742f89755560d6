package org.tensorcache.actors.coordinator;

import java.util.BitSet;
import org.apache.pekko.actor.typed.ActorRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.CacheProgress;
import org.tensorcache.actors.coordinator.CoordinatorState.Event;
import org.tensorcache.actors.coordinator.CoordinatorState.RangeLost;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.store.block.RangeData;

/**
 * The decisions of the restore at the start of a {@link FillDriver}: which segments to have a
 * {@link SegmentRestorer} read back and check, and for each one checked, what goes back into the
 * local replica and what the manifest must learn (a range lost, or a segment it did not know of).
 * The driver sends the messages.
 */
final class Restoration {
  private static final Logger log = LoggerFactory.getLogger(Restoration.class);

  /**
   * What a checked segment gives: {@code block} to merge into the local replica and {@code event}
   * to record, each null when there is none.
   */
  record Outcome(RangeData block, Event event) {}

  private static final Outcome NOTHING = new Outcome(null, null);

  private final TensorCacheNode node;
  private final Coverage coverage;

  Restoration(TensorCacheNode node, Coverage coverage) {
    this.node = node;
    this.coverage = coverage;
  }

  /**
   * The request that has every segment of {@code d} that the manifest or the directory knows of
   * read back and checked, answering to {@code replyTo}; until then the recorded ranges do not
   * count as persisted in the status.
   */
  SegmentRestorer.Restore start(
      CacheDefinition d, CacheProgress progress, ActorRef<SegmentRestorer.Restored> replyTo) {
    BitSet recorded = BitSet.valueOf(progress.persisted());
    recorded.stream().forEach(r -> coverage.verifying(d.cacheId(), r));
    return new SegmentRestorer.Restore(d, recorded, replyTo);
  }

  /**
   * Takes a checked segment, {@code manifest} being the coordinator's as the driver last heard it
   * (the coordinator ignores a range recorded twice).
   *
   * @throws IllegalStateException when the segments could not be listed: nothing is known lost, the
   *     driver restarts, asks for the manifest and lists again
   */
  Outcome restored(CoordinatorState manifest, SegmentRestorer.Restored r) {
    if (r.range() == SegmentRestorer.UNLISTED) {
      throw new IllegalStateException(
          "segments of " + r.cacheId() + " cannot be listed", r.failure());
    }
    if (r.range() == SegmentRestorer.DONE) {
      coverage.restored(r.cacheId());
      return NOTHING;
    }
    boolean persisted = manifest.progress(r.cacheId()).isPersisted(r.range());
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
      log.warn(
          "range {} of {} not restored, it will be computed again: {}",
          r.range(),
          r.cacheId(),
          cause.getMessage());
      return persisted
          ? new Outcome(
              null, new RangeLost(r.cacheId(), r.range(), String.valueOf(cause.getMessage())))
          : NOTHING;
    }
    return new Outcome(r.block(), persisted ? null : new RangePersisted(r.cacheId(), r.range()));
  }
}
