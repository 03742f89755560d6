package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether a JVM side's log-probs are TRL's ({@code bench_trl.py --values}): every row's chosen and
 * rejected log-prob, as {@code |tc - trl| / max(1, |trl|)}, within {@link #TOLERANCE}. Rows TRL
 * drops (a prompt that fills the length) are left out; the JVM side keeps them with 0 completion
 * tokens, which is checked.
 */
final class Agreement {
  /** Most relative difference allowed: libtorch's kernels and passes differ from TRL's. */
  static final double TOLERANCE = 1e-4;

  private Agreement() {}

  /** Compares the values in {@code jvm} with TRL's in {@code trl}; a missing file is said. */
  static Map<String, Object> check(Path jvm, Path trl) {
    if (!Files.isRegularFile(jvm) || !Files.isRegularFile(trl)) {
      return missing("no values of " + (Files.isRegularFile(jvm) ? trl : jvm));
    }
    JsonNode a;
    JsonNode b;
    try {
      a = new ObjectMapper().readTree(jvm.toFile());
      b = new ObjectMapper().readTree(trl.toFile());
    } catch (IOException e) {
      return missing("values unreadable: " + e.getMessage());
    }
    int n = b.path("rows").asInt();
    int compared = 0;
    int droppedWithTokens = 0;
    int outside = 0;
    double worst = 0;
    int worstRow = -1;
    String[][] sides = {{"chosen", "ref_chosen_logps"}, {"rejected", "ref_rejected_logps"}};
    for (int i = 0; i < n; i++) {
      for (String[] side : sides) {
        JsonNode v = b.path(side[1]).path(i);
        if (v.isNull() || v.isMissingNode()) {
          droppedWithTokens += a.path(side[0] + "_tokens").path(i).asDouble() == 0 ? 0 : 1;
          continue;
        }
        double diff =
            Math.abs(a.path(side[0] + "_logp").path(i).asDouble(Double.NaN) - v.asDouble());
        double rel = diff / Math.max(1, Math.abs(v.asDouble()));
        compared++;
        outside += rel <= TOLERANCE ? 0 : 1;
        if (!(rel <= worst)) {
          worst = rel;
          worstRow = i;
        }
      }
    }
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("rows", n);
    c.put("values_compared", compared);
    c.put("rows_trl_dropped", b.path("dropped").size());
    c.put("trl_dropped_rows_with_tokens_in_cache", droppedWithTokens);
    c.put("max_relative_diff", worst);
    c.put("worst_row", worstRow);
    c.put("outside_tolerance", outside);
    c.put("tolerance", TOLERANCE);
    c.put("within_tolerance", outside == 0 && droppedWithTokens == 0 && compared > 0);
    return c;
  }

  private static Map<String, Object> missing(String why) {
    return Map.of("left_out", why, "within_tolerance", false);
  }
}
