package org.tensorcache.actors.shard;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.Example;
import org.tensorcache.store.rows.RowBlock;

/**
 * The groups a per-token range is computed in (its cache planner's, of the range's rows alone, so a
 * row's bits never depend on who asked) and the order they are due in: requested ones first.
 */
final class RowPlan {
  private final List<Example> examples;
  private final List<int[]> groups;
  private final int[] groupOfOffset;
  private final ArrayDeque<Integer> queue = new ArrayDeque<>();

  RowPlan(CacheDefinition cache, RowBlock rows) {
    this.examples = cache.data().slice(rows.start(), rows.start() + rows.length());
    this.groups = cache.planner().groups(examples);
    this.groupOfOffset = new int[rows.length()];
    for (int g = 0; g < groups.size(); g++) {
      for (int offset : groups.get(g)) {
        groupOfOffset[offset] = g;
      }
    }
  }

  /** Every group is due, after those due already. */
  void fill() {
    for (int g = 0; g < groups.size(); g++) {
      queue.addLast(g);
    }
  }

  /** The group of {@code index} is due first. */
  void request(long index, RowBlock rows) {
    queue.addFirst(groupOfOffset[(int) (index - rows.start())]);
  }

  /** The next due group that misses a row, or -1. */
  int next(RowBlock rows) {
    while (!queue.isEmpty()) {
      int g = queue.pollFirst();
      for (int offset : groups.get(g)) {
        if (!rows.isPresent(rows.start() + offset)) {
          return g;
        }
      }
    }
    return -1;
  }

  /** The examples of group {@code g}. */
  List<Example> batch(int g) {
    List<Example> batch = new ArrayList<>();
    for (int offset : groups.get(g)) {
      batch.add(examples.get(offset));
    }
    return batch;
  }

  /** The groups, as offsets into the range. */
  List<int[]> groups() {
    return groups;
  }
}
