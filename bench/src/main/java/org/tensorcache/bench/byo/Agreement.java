package org.tensorcache.bench.byo;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether the three sides computed the same values: TensorCache's against the bare loop's bit for
 * bit (every field), and against Python's within {@code 1e-4 * max(1, |v|)} (the log-probs; torch
 * versions and kernels differ between the JVM's libtorch and Python's).
 */
final class Agreement {
  private static final double RELATIVE_TOLERANCE = 1e-4;

  private Agreement() {}

  /**
   * Compares the first {@code n} rows of {@code cache} ({@code [field][row]}) with {@code bare}
   * and, unless null, {@code python} ({@code [chosen, rejected][row]}); prints and returns the
   * findings.
   */
  static Map<String, Object> check(float[][] cache, float[][] bare, float[][] python, int n) {
    Map<String, Object> c = new LinkedHashMap<>();
    int differ = 0;
    for (int f = 0; f < cache.length; f++) {
      for (int i = 0; i < n; i++) {
        int a = Float.floatToRawIntBits(cache[f][i]);
        differ += a == Float.floatToRawIntBits(bare[f][i]) ? 0 : 1;
      }
    }
    System.out.printf(
        "check: TensorCache's values %s the bare loop's bit for bit (%d rows x %d fields, %d"
            + " differ)%n",
        differ == 0 ? "equal" : "DO NOT equal", n, cache.length, differ);
    c.put("bit_identical_to_bare_djl", differ == 0);
    c.put("bit_mismatches", differ);
    if (python == null) {
      return c;
    }
    int bad = 0;
    double worst = 0;
    for (int f = 0; f < 2; f++) {
      for (int i = 0; i < n; i++) {
        double v = python[f][i];
        double err = Math.abs(cache[f][i] - v) / (RELATIVE_TOLERANCE * Math.max(1, Math.abs(v)));
        worst = Math.max(worst, err);
        bad += err <= 1 ? 0 : 1;
      }
    }
    System.out.printf(
        "check: TensorCache's values %s Python's within 1e-4*max(1,|v|) (all %d rows x 2 fields,"
            + " %d outside; the worst difference is %.3f of the tolerance)%n",
        bad == 0 ? "match" : "DO NOT match", n, bad, worst);
    c.put("within_tolerance_of_python", bad == 0);
    c.put("python_outside_tolerance", bad);
    c.put("python_worst_diff_over_tolerance", Math.round(worst * 1e4) / 1e4);
    return c;
  }
}
