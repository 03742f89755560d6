package org.tensorcache.store.tier;

/** Where a lookup found its values, for the hit counters of {@link TierStats}. */
public enum Tier {
  /** A block in memory, published for lookups. */
  HOT,
  /** A local segment file, memory-mapped and read through the page cache. */
  WARM,
  /** Another node, over the network. */
  COLD
}
