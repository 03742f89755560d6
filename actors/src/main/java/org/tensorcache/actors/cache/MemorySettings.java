package org.tensorcache.actors.cache;

import com.typesafe.config.Config;
import org.tensorcache.store.tier.EvictionPolicy;

/**
 * The hot tier's settings ({@code tensorcache.memory}) and how far sessions prefetch ({@code
 * tensorcache.prefetch.steps}).
 *
 * @param budgetBytes bytes of values the hot tier holds at most
 * @param policy which range goes first when it is full
 * @param poolBytes evicted arrays kept for reuse, on top of the budget
 * @param prefetchSteps steps ahead a session brings into the hot tier; 0 is off
 */
public record MemorySettings(
    long budgetBytes, EvictionPolicy policy, long poolBytes, int prefetchSteps) {
  /** Reads the settings; {@code auto} budgets from {@code maxHeap}. */
  public static MemorySettings create(Config config, long maxHeap) {
    Config c = config.getConfig("tensorcache");
    long budget =
        "auto".equals(c.getValue("memory.budget").unwrapped())
            ? maxHeap / 4
            : c.getBytes("memory.budget");
    if (budget <= 0) {
      throw new IllegalArgumentException(
          "tensorcache.memory.budget = " + budget + ", expected a positive byte size or auto");
    }
    long pool =
        "auto".equals(c.getValue("memory.pool").unwrapped())
            ? budget / 8
            : c.getBytes("memory.pool");
    int steps = c.getInt("prefetch.steps");
    if (steps < 0) {
      throw new IllegalArgumentException(
          "tensorcache.prefetch.steps = " + steps + ", expected 0 (off) or more");
    }
    return new MemorySettings(
        budget, EvictionPolicy.parse(c.getString("memory.policy")), pool, steps);
  }
}
