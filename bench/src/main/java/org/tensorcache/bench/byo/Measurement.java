package org.tensorcache.bench.byo;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.report.Stats;

/**
 * One measurement of a process of its own, as the results file holds it: examples/s and seconds of
 * the timed part, memory in MiB ({@code peak_rss_mib}: {@code VmHWM}, load and warm-up included;
 * {@code rss_before_timed_mib}; {@code rss_after_load_mib} for a JVM) and what belongs to its side;
 * or why it was left out.
 */
record Measurement(String why, Map<String, Object> figures) {
  static Measurement missing(String why) {
    return new Measurement(why, Map.of());
  }

  boolean ok() {
    return why == null;
  }

  /** Figure {@code key}, or NaN. */
  double get(String key) {
    return figures.get(key) instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  /** Prints this measurement's line about {@code what} of {@code model}; returns it. */
  Measurement print(String model, String what) {
    if (ok()) {
      System.out.printf(
          "%-6s %-52s %9.3f examples/s (%.1f s), peak RSS %,6d MiB%n",
          model, what, get("examples_per_s"), get("seconds"), (long) get("peak_rss_mib"));
    } else {
      System.out.printf("%-6s %-52s left out: %s%n", model, what, why);
    }
    return this;
  }

  /** The figures, to three decimals, the main ones first. */
  Map<String, Object> toMap() {
    if (!ok()) {
      return Map.of("left_out", why);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (String k : List.of("examples_per_s", "seconds", "peak_rss_mib", "rss_before_timed_mib")) {
      if (figures.containsKey(k)) {
        m.put(k, figures.get(k));
      }
    }
    m.putAll(figures);
    m.replaceAll((k, v) -> v instanceof Double d ? Stats.round(d, 3) : v);
    return m;
  }
}
