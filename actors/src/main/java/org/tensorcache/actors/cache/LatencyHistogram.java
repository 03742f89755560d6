package org.tensorcache.actors.cache;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram with fixed buckets: one {@link LongAdder} per bucket, so that many threads
 * record without contending and without allocating. Its {@link Snapshot} gives the cumulative form
 * an exporter needs and quantile estimates interpolated within a bucket, as Prometheus' {@code
 * histogram_quantile} does.
 */
public final class LatencyHistogram {
  /** Bucket bounds for lookups, in seconds: 10 us to 30 s. */
  public static final double[] LOOKUP_BOUNDS = {
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
  };

  /** Bucket bounds for segment reads and writes, in seconds: 1 ms to 60 s. */
  public static final double[] IO_BOUNDS = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
  };

  private final double[] bounds;
  private final long[] boundNanos;
  private final LongAdder[] counts;
  private final LongAdder sumNanos = new LongAdder();

  /** A histogram with the upper bounds {@code bounds} (seconds, increasing) and one above them. */
  public LatencyHistogram(double[] bounds) {
    for (int i = 1; i < bounds.length; i++) {
      if (!(bounds[i] > bounds[i - 1])) {
        throw new IllegalArgumentException(
            "bucket bounds " + Arrays.toString(bounds) + ", expected them increasing");
      }
    }
    this.bounds = bounds.clone();
    this.boundNanos = new long[bounds.length];
    for (int i = 0; i < bounds.length; i++) {
      boundNanos[i] = Math.round(bounds[i] * 1e9);
    }
    this.counts = new LongAdder[bounds.length + 1];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = new LongAdder();
    }
  }

  /** Records one observation of {@code nanos} nanoseconds. */
  public void record(long nanos) {
    long n = Math.max(0, nanos);
    // a scan from the lowest bucket: on a lookup's path, where most values fall in the first ones,
    // it costs less than a binary search in seconds
    int i = 0;
    while (i < boundNanos.length && n > boundNanos[i]) {
      i++; // a value on a bound belongs to that bucket (le)
    }
    counts[i].increment();
    sumNanos.add(n);
  }

  /** Records the time from {@code startedNanos} ({@link System#nanoTime()}) to now. */
  public void recordSince(long startedNanos) {
    record(System.nanoTime() - startedNanos);
  }

  /** The counts now; each exact, not all taken at one instant. */
  public Snapshot snapshot() {
    long[] c = new long[counts.length];
    for (int i = 0; i < c.length; i++) {
      c[i] = counts[i].sum();
    }
    return new Snapshot(bounds.clone(), c, sumNanos.sum() / 1e9);
  }

  /**
   * A histogram at one moment.
   *
   * @param bounds the finite upper bounds in seconds; the last bucket has none (+Inf)
   * @param counts observations per bucket (not cumulative), one more than {@code bounds}
   * @param sumSeconds the sum of every observation
   */
  public record Snapshot(double[] bounds, long[] counts, double sumSeconds) {
    /** Observations in all. */
    public long count() {
      long n = 0;
      for (long c : counts) {
        n += c;
      }
      return n;
    }

    /**
     * The {@code q} quantile (0 to 1) in seconds, interpolated linearly within its bucket (the
     * first bucket starts at 0); NaN without observations; the highest finite bound when it falls
     * in the last bucket.
     */
    public double quantile(double q) {
      if (q < 0 || q > 1) {
        throw new IllegalArgumentException("quantile " + q + ", expected 0 to 1");
      }
      long total = count();
      if (total == 0) {
        return Double.NaN;
      }
      double rank = q * total;
      long below = 0;
      for (int i = 0; i < counts.length; i++) {
        if (counts[i] > 0 && below + counts[i] >= rank) {
          if (i == bounds.length) {
            return bounds[bounds.length - 1];
          }
          double lower = i == 0 ? 0 : bounds[i - 1];
          return lower + (bounds[i] - lower) * ((rank - below) / counts[i]);
        }
        below += counts[i];
      }
      return bounds[bounds.length - 1];
    }
  }
}
