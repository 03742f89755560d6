package org.tensorcache.store.block;

import java.util.Arrays;

/**
 * The presence bitset of a block, to say which examples of its range hold a value: bit {@code i %
 * 64} of word {@code i / 64} for the range's example {@code i}, and how many bits are set.
 *
 * <p>The words are read directly by the merge and the gather, which walk them a word at a time;
 * whoever changes them through {@link #orWord} calls {@link #recount} when done.
 */
final class Presence {
  /** The bits; bits at or beyond the range length are always clear. */
  final long[] words;

  private int count;

  /** Takes {@code words} over; the caller has checked their number and their tail bits. */
  Presence(long[] words) {
    this.words = words;
    recount();
  }

  /** No example present, for a range of {@code length} examples. */
  static Presence none(int length) {
    return new Presence(new long[wordsFor(length)]);
  }

  /** The number of words that hold {@code bits} bits. */
  static int wordsFor(int bits) {
    return (bits + 63) >>> 6;
  }

  /** Whether example {@code i} of the range is present. */
  boolean has(int i) {
    return (words[i >>> 6] & (1L << i)) != 0;
  }

  /** Marks example {@code i} present; returns whether it was missing before. */
  boolean add(int i) {
    long bit = 1L << i;
    long word = words[i >>> 6];
    if ((word & bit) != 0) {
      return false;
    }
    words[i >>> 6] = word | bit;
    count++;
    return true;
  }

  /** Sets the bits of {@code bits} in word {@code w}; {@link #count} is stale until recount. */
  void orWord(int w, long bits) {
    words[w] |= bits;
  }

  /** Counts the set bits again, after {@link #orWord}. */
  void recount() {
    int c = 0;
    for (long w : words) {
      c += Long.bitCount(w);
    }
    count = c;
  }

  /** The number of present examples. */
  int count() {
    return count;
  }

  /** An independent copy. */
  Presence copy() {
    return new Presence(words.clone());
  }

  /** A copy of the words. */
  long[] toWords() {
    return words.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Presence p && Arrays.equals(p.words, words);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(words);
  }
}
