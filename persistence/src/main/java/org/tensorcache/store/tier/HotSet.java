package org.tensorcache.store.tier;

import java.util.Arrays;

/**
 * The hot ranges of every cache of a tier in one list, which an eviction scans for its victim;
 * removal moves the last entry into the hole. Guarded by the tier's lock.
 */
final class HotSet {
  private HotCache[] caches = new HotCache[16];
  private int[] ranges = new int[16];
  private int size;

  int size() {
    return size;
  }

  HotCache cache(int i) {
    return caches[i];
  }

  int range(int i) {
    return ranges[i];
  }

  void add(HotCache c, int range) {
    if (size == caches.length) {
      caches = Arrays.copyOf(caches, size * 2);
      ranges = Arrays.copyOf(ranges, size * 2);
    }
    caches[size] = c;
    ranges[size] = range;
    c.position[range] = size++;
  }

  void remove(HotCache c, int range) {
    int i = c.position[range];
    int last = --size;
    caches[i] = caches[last];
    ranges[i] = ranges[last];
    caches[i].position[ranges[i]] = i;
    caches[last] = null;
    c.position[range] = -1;
  }

  /** The bytes of the hot ranges that could be evicted: unpinned, other than the one given. */
  long evictableBytes(HotCache exceptCache, int exceptRange) {
    long bytes = 0;
    for (int i = 0; i < size; i++) {
      if (evictable(i, exceptCache, exceptRange)) {
        bytes += caches[i].bytes(ranges[i]);
      }
    }
    return bytes;
  }

  /** The entry {@code policy} evicts first among the evictable ones, or -1 when there is none. */
  int victim(EvictionPolicy policy, HotCache exceptCache, int exceptRange) {
    int best = -1;
    for (int i = 0; i < size; i++) {
      if (evictable(i, exceptCache, exceptRange) && (best < 0 || before(policy, i, best))) {
        best = i;
      }
    }
    return best;
  }

  private boolean evictable(int i, HotCache exceptCache, int exceptRange) {
    HotCache c = caches[i];
    int r = ranges[i];
    return c.pins[r] == 0 && !(c == exceptCache && r == exceptRange);
  }

  /**
   * Whether entry {@code i} goes before entry {@code j}: fewer uses (LFU), older use, admission.
   */
  private boolean before(EvictionPolicy policy, int i, int j) {
    HotCache a = caches[i];
    HotCache b = caches[j];
    int ra = ranges[i];
    int rb = ranges[j];
    if (policy == EvictionPolicy.LFU && a.uses[ra] != b.uses[rb]) {
      return a.uses[ra] < b.uses[rb];
    }
    long ua = a.lastUse(ra);
    long ub = b.lastUse(rb);
    return ua != ub ? ua < ub : a.admitted[ra] < b.admitted[rb];
  }
}
