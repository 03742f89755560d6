package org.tensorcache.actors.shard;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;

/** The compute requests of a shard that wait for some of their indices. */
final class Waiters {
  private record Waiter(long[] indices, ActorRef<StatusReply<ShardActor.Computed>> replyTo) {}

  private final List<Waiter> waiting = new ArrayList<>();

  boolean isEmpty() {
    return waiting.isEmpty();
  }

  void add(long[] indices, ActorRef<StatusReply<ShardActor.Computed>> replyTo) {
    waiting.add(new Waiter(indices, replyTo));
  }

  /** Answers every request whose indices are all present now. */
  void answer(Block current) {
    Iterator<Waiter> it = waiting.iterator();
    while (it.hasNext()) {
      Waiter w = it.next();
      if (allPresent(w.indices(), current)) {
        w.replyTo()
            .tell(
                StatusReply.success(
                    new ShardActor.Computed(w.indices(), values(w.indices(), current))));
        it.remove();
      }
    }
  }

  /** Fails the requests that wait for a missing index of {@code group}. */
  void fail(MicroBatchPlan plan, int group, Block current, String message) {
    Iterator<Waiter> it = waiting.iterator();
    while (it.hasNext()) {
      Waiter w = it.next();
      for (long index : w.indices()) {
        if (plan.groupOf(index, current.start()) == group && !current.isPresent(index)) {
          w.replyTo().tell(StatusReply.error(message));
          it.remove();
          break;
        }
      }
    }
  }

  private static boolean allPresent(long[] indices, Block current) {
    for (long i : indices) {
      if (!current.isPresent(i)) {
        return false;
      }
    }
    return true;
  }

  private static Object[] values(long[] indices, Block current) {
    int fields = current.spec().fields().size();
    Object[] values = new Object[fields];
    for (int f = 0; f < fields; f++) {
      FieldSpec field = current.spec().fields().get(f);
      int width = field.width();
      values[f] = field.dtype().newArray(indices.length * width);
      for (int i = 0; i < indices.length; i++) {
        current.copyValues(f, indices[i], values[f], i * width);
      }
    }
    return values;
  }
}
