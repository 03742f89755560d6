package org.tensorcache.actors.coordinator;

import java.util.BitSet;
import java.util.SortedSet;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.store.block.Block;

/**
 * The coordinator's child that brings persisted segments back at start, on the I/O dispatcher it is
 * spawned on: it lists the cache's segment directory (deleting leftover temporary files), then
 * reads and checks every segment the journal or the directory knows of, one reply per range.
 */
final class SegmentRestorer {
  private SegmentRestorer() {}

  /** Restore the segments of {@code cache}; {@code recorded} holds the ranges the journal knows. */
  record Restore(CacheDefinition cache, BitSet recorded, ActorRef<Restored> replyTo) {}

  /** The range of a {@link Restored} that says the segment directory could not be listed. */
  static final int UNLISTED = -1;

  /** A range's segment, checked: {@code block} is null when there was none or it was unusable. */
  record Restored(String cacheId, int range, Block block, Throwable failure) {}

  /** A restorer whose reads run on {@code io}. */
  static Behavior<Restore> create(Executor io) {
    return Behaviors.receive(Restore.class)
        .onMessage(
            Restore.class,
            restore -> {
              scan(restore, io);
              return Behaviors.same();
            })
        .build();
  }

  private static void scan(Restore restore, Executor io) {
    CacheDefinition d = restore.cache();
    SortedSet<Integer> ranges;
    try {
      ranges = SegmentIo.toRestore(d, restore.recorded()::get);
    } catch (RuntimeException e) {
      // the directory cannot be listed: nothing is known lost, the coordinator restarts and tries
      // again
      restore.replyTo().tell(new Restored(d.cacheId(), UNLISTED, null, e));
      return;
    }
    for (int range : ranges) {
      SegmentIo.read(d, range, io)
          .whenComplete(
              (block, failure) ->
                  restore.replyTo().tell(new Restored(d.cacheId(), range, block, failure)));
    }
  }
}
