package org.tensorcache.bench.tiers;

import com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.Arrays;
import java.util.function.IntConsumer;
import java.util.stream.LongStream;
import org.tensorcache.bench.report.Stats;

/**
 * The latencies of timed calls (a lookup, a session step, an array gather) to the nanosecond, and
 * the loop that times them. Batches per second count the calls' own time, not the time between.
 */
@JsonNaming(SnakeCaseStrategy.class)
public record Timings(double p50Us, double p99Us, long batchesPerS, int timed) {
  /** The timings of {@code nanos}, one duration per call. */
  public static Timings of(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return new Timings(
        Stats.round(sorted[sorted.length / 2] / 1e3, 3),
        Stats.round(sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)] / 1e3, 3),
        Math.round(sorted.length / (LongStream.of(sorted).sum() / 1e9)),
        sorted.length);
  }

  /**
   * Times {@code calls} in rounds, one after the other in each round so that all see the same
   * moments of a noisy machine; {@code before} sets a round's inputs up and {@code after} checks
   * its values, both untimed, given the timed round's number (-1 in the warm-up). The first rounds,
   * at least {@code minWarmUp} and until {@code warmUpNanos} have passed, warm the JIT up.
   */
  public static Timings[] rounds(
      int minWarmUp,
      long warmUpNanos,
      int timed,
      IntConsumer before,
      IntConsumer after,
      Runnable... calls) {
    long[][] nanos = new long[calls.length][timed];
    long warmEnd = System.nanoTime() + warmUpNanos;
    int warmUp = -1; // the warm-up's rounds, once it is over
    for (int r = 0; warmUp < 0 || r < warmUp + timed; r++) {
      if (warmUp < 0 && r >= minWarmUp && System.nanoTime() >= warmEnd) {
        warmUp = r;
      }
      int round = warmUp < 0 ? -1 : r - warmUp;
      before.accept(round);
      for (int c = 0; c < calls.length; c++) {
        long t0 = System.nanoTime();
        calls[c].run();
        long t = System.nanoTime() - t0;
        if (round >= 0) {
          nanos[c][round] = t;
        }
      }
      after.accept(round);
    }
    return Arrays.stream(nanos).map(Timings::of).toArray(Timings[]::new);
  }
}
