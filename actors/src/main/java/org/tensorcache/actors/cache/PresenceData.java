package org.tensorcache.actors.cache;

import java.util.Arrays;
import org.apache.pekko.cluster.ddata.AbstractReplicatedData;

/**
 * Which examples of a range have been computed, for caches whose blocks are too large to gossip: a
 * grow-only bitset merged with OR. The values stay with the range's shard and in its segment and
 * move point to point.
 */
public final class PresenceData extends AbstractReplicatedData<PresenceData> {
  private final long[] words;

  /** Takes over {@code words}; the caller must not change them. */
  public PresenceData(long[] words) {
    this.words = words;
  }

  /** No example present, for a range of {@code length}. */
  public static PresenceData empty(int length) {
    return new PresenceData(new long[(length + 63) / 64]);
  }

  /** A copy of the bitset words. */
  public long[] words() {
    return words.clone();
  }

  /** Number of examples present. */
  public int count() {
    int c = 0;
    for (long w : words) {
      c += Long.bitCount(w);
    }
    return c;
  }

  @Override
  public PresenceData mergeData(PresenceData that) {
    long[] merged = Arrays.copyOf(words, Math.max(words.length, that.words.length));
    for (int i = 0; i < that.words.length; i++) {
      merged[i] |= that.words[i];
    }
    return Arrays.equals(merged, words) ? this : new PresenceData(merged);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PresenceData p && Arrays.equals(p.words, words);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(words);
  }
}
