package org.tensorcache.actors.shard;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;

/**
 * The values a shard holds of its range, and the compute requests that wait for some of them: every
 * merge answers the requests it completes.
 */
final class RangeValues {
  private record Waiter(long[] indices, ActorRef<StatusReply<ShardActor.Computed>> replyTo) {}

  private final Block block;
  private final List<Waiter> waiting = new ArrayList<>();

  /** Starting from {@code empty}, the range's block with no example present. */
  RangeValues(Block empty) {
    this.block = empty;
  }

  /** The range's block; only the shard changes it, through {@link #merge}. */
  Block block() {
    return block;
  }

  /** Whether every example of the range is present. */
  boolean isComplete() {
    return block.isComplete();
  }

  /** Whether no compute request waits. */
  boolean nobodyWaits() {
    return waiting.isEmpty();
  }

  /**
   * Merges {@code part} into the range's values and answers the requests it completes; true when
   * this merge completed the range.
   */
  boolean merge(Block part) {
    boolean wasComplete = block.isComplete();
    block.mergeInPlace(part);
    answer();
    return !wasComplete && block.isComplete();
  }

  /** Waits for {@code indices}; answered at once when they are all present. */
  void await(long[] indices, ActorRef<StatusReply<ShardActor.Computed>> replyTo) {
    waiting.add(new Waiter(indices, replyTo));
    answer();
  }

  /** Fails the requests that wait for a missing index of {@code group}. */
  void fail(MicroBatchPlan plan, int group, String message) {
    Iterator<Waiter> it = waiting.iterator();
    while (it.hasNext()) {
      Waiter w = it.next();
      for (long index : w.indices()) {
        if (plan.groupOf(index, block.start()) == group && !block.isPresent(index)) {
          w.replyTo().tell(StatusReply.error(message));
          it.remove();
          break;
        }
      }
    }
  }

  /** Answers every request whose indices are all present now. */
  private void answer() {
    Iterator<Waiter> it = waiting.iterator();
    while (it.hasNext()) {
      Waiter w = it.next();
      if (allPresent(w.indices())) {
        w.replyTo()
            .tell(StatusReply.success(new ShardActor.Computed(w.indices(), values(w.indices()))));
        it.remove();
      }
    }
  }

  private boolean allPresent(long[] indices) {
    for (long i : indices) {
      if (!block.isPresent(i)) {
        return false;
      }
    }
    return true;
  }

  private Object[] values(long[] indices) {
    int fields = block.spec().fields().size();
    Object[] values = new Object[fields];
    for (int f = 0; f < fields; f++) {
      FieldSpec field = block.spec().fields().get(f);
      int width = field.width();
      values[f] = field.dtype().newArray(indices.length * width);
      for (int i = 0; i < indices.length; i++) {
        block.copyValues(f, indices[i], values[f], i * width);
      }
    }
    return values;
  }
}
