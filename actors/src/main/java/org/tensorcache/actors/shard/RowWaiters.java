package org.tensorcache.actors.shard;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.store.rows.RowBlock;

/**
 * The requests for rows that wait for some of them to be computed: every group done answers those
 * it completes, each with as many rows as fit its byte limit.
 */
final class RowWaiters {
  private final List<RowShard.ComputeRows> waiting = new ArrayList<>();

  void add(RowShard.ComputeRows asked) {
    waiting.add(asked);
  }

  /** Answers every request whose first rows, as many as its limit takes, are all present. */
  void answer(RowBlock rows) {
    Iterator<RowShard.ComputeRows> it = waiting.iterator();
    while (it.hasNext()) {
      RowShard.ComputeRows w = it.next();
      int n = prefix(w, rows);
      if (n > 0) {
        it.remove();
        long[] indices = java.util.Arrays.copyOf(w.indices(), n);
        int[] tokens = new int[n];
        byte[][] bytes = new byte[n][];
        for (int i = 0; i < n; i++) {
          tokens[i] = rows.tokens(indices[i]);
          bytes[i] = rows.row(indices[i]);
        }
        w.replyTo().tell(StatusReply.success(new RowShard.ComputedRows(indices, tokens, bytes)));
      }
    }
  }

  /** Fails the requests waiting for a missing row of {@code group}. */
  void fail(RowBlock rows, int group, List<int[]> groups, String message) {
    java.util.Set<Long> lost = new java.util.HashSet<>();
    for (int offset : groups.get(group)) {
      if (!rows.isPresent(rows.start() + offset)) {
        lost.add(rows.start() + offset);
      }
    }
    Iterator<RowShard.ComputeRows> it = waiting.iterator();
    while (it.hasNext()) {
      RowShard.ComputeRows w = it.next();
      for (long index : w.indices()) {
        if (lost.contains(index)) {
          w.replyTo().tell(StatusReply.error(message));
          it.remove();
          break;
        }
      }
    }
  }

  /**
   * How many of the request's first rows can be answered now: all present and within its byte limit
   * (at least one); 0 when the first that fits is not computed yet.
   */
  private static int prefix(RowShard.ComputeRows w, RowBlock rows) {
    long bytes = 0;
    int n = 0;
    for (long index : w.indices()) {
      if (!rows.isPresent(index)) {
        return 0;
      }
      bytes += rows.row(index).length + 12L;
      if (n > 0 && bytes > w.maxBytes()) {
        break;
      }
      n++;
    }
    return n;
  }
}
