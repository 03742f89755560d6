package org.tensorcache.bench.report;

import java.util.Arrays;

/** The arithmetic of the reports: medians and rounding. */
public final class Stats {
  private Stats() {}

  /** The median; of an even count, the mean of the middle two; NaN of none. */
  public static double median(double[] values) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] v = values.clone();
    Arrays.sort(v);
    int h = v.length / 2;
    return v.length % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
  }

  /** {@code x} rounded to {@code digits} decimals; NaN and the infinities as they are. */
  public static double round(double x, int digits) {
    double scale = Math.pow(10, digits);
    return Double.isFinite(x) ? Math.round(x * scale) / scale : x;
  }

  public static double round1(double x) {
    return round(x, 1);
  }

  public static double round2(double x) {
    return round(x, 2);
  }
}
