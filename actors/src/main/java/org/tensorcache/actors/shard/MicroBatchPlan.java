package org.tensorcache.actors.shard;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.store.block.Block;

/**
 * Which group of a range to compute next: the groups of requested indices first, in request order,
 * then (when a fill is asked for) every incomplete group in order. The groups are the cache's
 * planner's, fixed for the range, so a row is always computed with the same rows around it. A group
 * whose computation failed is skipped by the fill until it is asked for again.
 */
final class MicroBatchPlan {
  private final List<int[]> groups;
  private final int[] groupOfOffset;
  private final ArrayDeque<Integer> priority = new ArrayDeque<>();
  private final boolean[] failed;
  private boolean fill;

  /** A plan over {@code groups}: offsets in a range of {@code length} rows, each in one group. */
  MicroBatchPlan(List<int[]> groups, int length) {
    this.groups = List.copyOf(groups);
    this.groupOfOffset = new int[length];
    Arrays.fill(groupOfOffset, -1);
    for (int g = 0; g < groups.size(); g++) {
      for (int offset : groups.get(g)) {
        if (offset < 0 || offset >= length || groupOfOffset[offset] >= 0) {
          throw new IllegalArgumentException(
              "offset " + offset + " of group " + g + " is outside [0, " + length + ") or taken");
        }
        groupOfOffset[offset] = g;
      }
    }
    for (int offset = 0; offset < length; offset++) {
      if (groupOfOffset[offset] < 0) {
        throw new IllegalArgumentException("offset " + offset + " is in no group");
      }
    }
    this.failed = new boolean[groups.size()];
  }

  /** The group of an index of the range that starts at {@code start}. */
  int groupOf(long index, long start) {
    return groupOfOffset[(int) (index - start)];
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

  /** The indices of {@code group}, ascending. */
  long[] indices(int group, Block current) {
    int[] offsets = groups.get(group);
    long[] out = new long[offsets.length];
    for (int i = 0; i < offsets.length; i++) {
      out[i] = current.start() + offsets[i];
    }
    return out;
  }

  private boolean complete(int group, Block current) {
    for (int offset : groups.get(group)) {
      if (!current.isPresent(current.start() + offset)) {
        return false;
      }
    }
    return true;
  }
}
