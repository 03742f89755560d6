package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether a JVM side's log-probs are TRL's: every row's chosen and rejected log-prob against TRL's
 * ({@code bench_trl.py --values}), as {@code |tc - trl| / max(1, |trl|)}, within {@link
 * #TOLERANCE}. Rows TRL drops (a prompt that fills the length) are left out; the JVM side keeps
 * them with 0 completion tokens, which is checked.
 */
final class Agreement {
  /** Most relative difference allowed: libtorch's kernels and passes differ from TRL's. */
  static final double TOLERANCE = 1e-4;

  private static final ObjectMapper JSON = new ObjectMapper();

  private Agreement() {}

  /**
   * Compares the values a {@link ByoChild} wrote to {@code jvm} with those TRL wrote to {@code
   * trl}; missing files give a finding that says so.
   */
  static Map<String, Object> check(Path jvm, Path trl) {
    Map<String, Object> c = new LinkedHashMap<>();
    if (jvm == null || !Files.isRegularFile(jvm) || trl == null || !Files.isRegularFile(trl)) {
      c.put("left_out", "no values of " + (jvm == null || !Files.isRegularFile(jvm) ? jvm : trl));
      c.put("within_tolerance", false);
      return c;
    }
    try {
      JsonNode a = JSON.readTree(jvm.toFile());
      JsonNode b = JSON.readTree(trl.toFile());
      int n = b.path("rows").asInt();
      int compared = 0;
      int droppedWithTokens = 0;
      int outside = 0;
      double worst = 0;
      int worstRow = -1;
      String[][] sides = {
        {"chosen_logp", "ref_chosen_logps"}, {"rejected_logp", "ref_rejected_logps"}
      };
      for (int i = 0; i < n; i++) {
        for (int s = 0; s < 2; s++) {
          JsonNode v = b.path(sides[s][1]).path(i);
          if (v.isNull() || v.isMissingNode()) {
            String tokens = s == 0 ? "chosen_tokens" : "rejected_tokens";
            droppedWithTokens += a.path(tokens).path(i).asDouble() == 0 ? 0 : 1;
            continue;
          }
          double ref = v.asDouble();
          double diff = Math.abs(a.path(sides[s][0]).path(i).asDouble(Double.NaN) - ref);
          double rel = diff / Math.max(1, Math.abs(ref));
          compared++;
          if (!(rel <= TOLERANCE)) {
            outside++;
          }
          if (!(rel <= worst)) {
            worst = rel;
            worstRow = i;
          }
        }
      }
      c.put("rows", n);
      c.put("values_compared", compared);
      c.put("rows_trl_dropped", b.path("dropped").size());
      c.put("trl_dropped_rows_with_tokens_in_cache", droppedWithTokens);
      c.put("max_relative_diff", worst);
      c.put("worst_row", worstRow);
      c.put("outside_tolerance", outside);
      c.put("tolerance", TOLERANCE);
      c.put("within_tolerance", outside == 0 && droppedWithTokens == 0 && compared > 0);
    } catch (IOException e) {
      c.put("left_out", "values unreadable: " + e.getMessage());
      c.put("within_tolerance", false);
    }
    return c;
  }
}
