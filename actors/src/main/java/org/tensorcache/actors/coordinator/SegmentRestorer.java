package org.tensorcache.actors.coordinator;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.store.block.RangeData;

/**
 * The fill driver's child that brings persisted segments back at start, on the I/O dispatcher it is
 * spawned on: it lists the cache's segment directory (deleting leftover temporary files), then
 * reads and checks every segment the journal or the directory knows of, one reply per range, and
 * then one {@link #DONE} reply.
 */
final class SegmentRestorer {
  private SegmentRestorer() {}

  /** Restore the segments of {@code cache}; {@code recorded} holds the ranges the journal knows. */
  record Restore(CacheDefinition cache, BitSet recorded, ActorRef<Restored> replyTo) {}

  /** The range of a {@link Restored} that says the segment directory could not be listed. */
  static final int UNLISTED = -1;

  /** The range of the {@link Restored} that follows every range's reply: the restore is over. */
  static final int DONE = -2;

  /**
   * A range's segment, checked: {@code block} is null when there was none or it was unusable;
   * {@code from} is the restorer that read it, so that a driver restarted since can tell the
   * replies of its own restorer from those of the one stopped with its previous instance.
   */
  record Restored(
      ActorRef<Restore> from, String cacheId, int range, RangeData block, Throwable failure) {}

  /** A restorer whose reads run on {@code io}, timed into {@code metrics}. */
  static Behavior<Restore> create(Executor io, NodeMetrics metrics) {
    return Behaviors.setup(
        ctx ->
            Behaviors.receive(Restore.class)
                .onMessage(
                    Restore.class,
                    restore -> {
                      scan(ctx.getSelf(), restore, io, metrics);
                      return Behaviors.same();
                    })
                .build());
  }

  private static void scan(
      ActorRef<Restore> self, Restore restore, Executor io, NodeMetrics metrics) {
    CacheDefinition d = restore.cache();
    SortedSet<Integer> ranges;
    try {
      ranges = SegmentIo.toRestore(d, restore.recorded()::get);
    } catch (RuntimeException e) {
      // the directory cannot be listed: nothing is known lost, the driver restarts and tries again
      restore.replyTo().tell(new Restored(self, d.cacheId(), UNLISTED, null, e));
      return;
    }
    List<CompletableFuture<?>> replies = new ArrayList<>();
    for (int range : ranges) {
      replies.add(
          SegmentIo.readRange(d, range, io, metrics)
              .whenComplete(
                  (block, failure) ->
                      restore
                          .replyTo()
                          .tell(new Restored(self, d.cacheId(), range, block, failure))));
    }
    // told after every range's reply, so it arrives after them
    CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
        .whenComplete(
            (ok, failure) ->
                restore.replyTo().tell(new Restored(self, d.cacheId(), DONE, null, null)));
  }
}
