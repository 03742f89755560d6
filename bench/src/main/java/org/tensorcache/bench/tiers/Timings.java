package org.tensorcache.bench.tiers;

import com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.Arrays;
import java.util.stream.LongStream;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.report.Stats;

/**
 * The latencies of timed calls (a lookup, a session step, an array gather) to the nanosecond.
 * Batches per second count the calls' own time, not the time between.
 */
@JsonNaming(SnakeCaseStrategy.class)
public record Timings(double p50Us, double p99Us, long batchesPerS, int timed) {
  public static Timings of(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return new Timings(
        Stats.round(sorted[sorted.length / 2] / 1e3, 3),
        Stats.round(sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)] / 1e3, 3),
        Math.round(sorted.length / (LongStream.of(sorted).sum() / 1e9)),
        sorted.length);
  }

  public static Timings[] of(Rounds rounds) {
    return Arrays.stream(rounds.nanos()).map(Timings::of).toArray(Timings[]::new);
  }
}
