package org.tensorcache.bench;

import java.util.Arrays;

/**
 * Alternating timings of ways to do the same work: each round prepares (untimed), then times every
 * way in turn, so that the machine's drift falls on all alike. Warm-up rounds come first and are
 * dropped; the last is repeated until a warm-up time has passed.
 *
 * @param nanos each way's round times, sorted
 * @param warmUpRounds the rounds dropped
 */
record Rounds(long[][] nanos, int warmUpRounds) {
  /** A round's preparation (given the round), or the {@code i}th run of a way in a round. */
  @FunctionalInterface
  interface Step {
    void run(int i) throws Exception;
  }

  /** Times {@code ways}, each run {@code times} times a round. */
  static Rounds time(int warmUp, long warmUpNanos, int rounds, int times, Step prep, Step... ways)
      throws Exception {
    long[][] nanos = new long[ways.length][rounds];
    long warmEnd = System.nanoTime() + warmUpNanos;
    int all = 0;
    for (int round = -warmUp; round < rounds; round++, all++) {
      prep.run(round);
      for (int k = 0; k < ways.length; k++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < times; i++) {
          ways[k].run(i);
        }
        if (round >= 0) {
          nanos[k][round] = System.nanoTime() - t0;
        }
      }
      if (round == -1 && System.nanoTime() < warmEnd) {
        round--; // the last warm-up round again, until the warm-up time is over
      }
    }
    for (long[] n : nanos) {
      Arrays.sort(n);
    }
    return new Rounds(nanos, all - rounds);
  }

  /** Way {@code way}'s quantile {@code q} (0.5: the median), in nanoseconds. */
  double at(int way, double q) {
    return nanos[way][(int) (nanos[way].length * q)];
  }
}
