package org.tensorcache.store.tier;

import java.util.Arrays;
import java.util.Locale;

/**
 * Which hot range {@link HotTier} evicts first when an admission needs room. Ties are broken the
 * same way under both: the range used least recently, then the range admitted first, so an eviction
 * order is a function of the calls alone.
 */
public enum EvictionPolicy {
  /** Least recently used: the range whose last use is oldest goes first. */
  LRU,
  /**
   * Least frequently used: the range with the fewest uses goes first; counts are halved now and
   * then so that a range that was hot once does not stay forever (see {@link HotTier}).
   */
  LFU;

  /** Parses a policy name in any case, naming the accepted ones when it is none of them. */
  public static EvictionPolicy parse(String name) {
    String n = name == null ? "" : name.trim().toUpperCase(Locale.ROOT);
    for (EvictionPolicy p : values()) {
      if (p.name().equals(n)) {
        return p;
      }
    }
    throw new IllegalArgumentException(
        "eviction policy '" + name + "' unknown, expected one of " + Arrays.toString(values()));
  }
}
