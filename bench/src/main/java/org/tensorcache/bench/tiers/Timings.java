package org.tensorcache.bench.tiers;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.bench.report.Stats;

/**
 * The latencies of a run of timed calls (a lookup, a session step, an array gather).
 *
 * @param p50Us median in microseconds
 * @param p99Us 99th percentile in microseconds
 * @param batchesPerS calls per second of the calls' own time (time between them, such as a
 *     trainer's work on a step, not counted)
 * @param count how many calls were timed
 */
public record Timings(double p50Us, double p99Us, double batchesPerS, int count) {
  /** The timings of {@code nanos}, one duration per call. */
  public static Timings of(long[] nanos) {
    if (nanos.length == 0) {
      throw new IllegalArgumentException("no timed calls, expected at least one");
    }
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    long total = 0;
    for (long t : sorted) {
      total += t;
    }
    return new Timings(
        sorted[sorted.length / 2] / 1e3,
        sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)] / 1e3,
        sorted.length / (total / 1e9),
        sorted.length);
  }

  /** The figures for a results file, rounded. */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("p50_us", Stats.round1(p50Us));
    m.put("p99_us", Stats.round1(p99Us));
    m.put("batches_per_s", Math.round(batchesPerS));
    m.put("timed", count);
    return m;
  }
}
