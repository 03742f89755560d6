package org.tensorcache.actors.shard;

import java.util.ArrayDeque;
import java.util.Arrays;
import org.tensorcache.store.block.Block;

/**
 * Which aligned micro-batch of a range to compute next: the groups of requested indices first, in
 * request order, then (when a fill is asked for) every incomplete group in order. A group whose
 * computation failed is skipped by the fill until it is asked for again.
 */
final class MicroBatchPlan {
  private final int groupSize;
  private final ArrayDeque<Integer> priority = new ArrayDeque<>();
  private final boolean[] failed;
  private boolean fill;

  MicroBatchPlan(int length, int groupSize) {
    this.groupSize = groupSize;
    this.failed = new boolean[(length + groupSize - 1) / groupSize];
  }

  /** The group of an index of the range that starts at {@code start}. */
  int groupOf(long index, long start) {
    return (int) ((index - start) / groupSize);
  }

  /** Asks for the whole range; failed groups get another chance. */
  void fill() {
    fill = true;
    Arrays.fill(failed, false);
  }

  /** Asks for the groups of the missing {@code indices} first. */
  void request(long[] indices, Block current) {
    for (long index : indices) {
      if (!current.isPresent(index)) {
        int group = groupOf(index, current.start());
        failed[group] = false;
        if (!priority.contains(group)) {
          priority.add(group);
        }
      }
    }
  }

  /** An error naming the first index not in the range of {@code current}, or null if none. */
  String outside(long[] indices, Block current, String cacheId) {
    long end = current.start() + current.length();
    for (long index : indices) {
      if (index < current.start() || index >= end) {
        return String.format(
            "index %d is not in range %d [%d, %d) of cache '%s'",
            index, current.range(), current.start(), end, cacheId);
      }
    }
    return null;
  }

  /** Records that computing {@code group} failed. */
  void failed(int group) {
    failed[group] = true;
  }

  /** The next group to compute that is not {@code busy}, or -1 when there is nothing to do. */
  int next(Block current, java.util.function.IntPredicate busy) {
    while (!priority.isEmpty()) {
      int g = priority.poll();
      if (!busy.test(g) && !complete(g, current)) {
        return g;
      }
    }
    if (fill) {
      for (int g = 0; g < failed.length; g++) {
        if (!failed[g] && !busy.test(g) && !complete(g, current)) {
          return g;
        }
      }
    }
    return -1;
  }

  /** The first index of {@code group}. */
  long from(int group, Block current) {
    return current.start() + (long) group * groupSize;
  }

  /** One past the last index of {@code group}. */
  long to(int group, Block current) {
    return Math.min(current.start() + current.length(), from(group, current) + groupSize);
  }

  private boolean complete(int group, Block current) {
    for (long i = from(group, current); i < to(group, current); i++) {
      if (!current.isPresent(i)) {
        return false;
      }
    }
    return true;
  }
}
