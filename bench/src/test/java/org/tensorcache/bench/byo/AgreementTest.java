package org.tensorcache.bench.byo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The values check counts every chosen and rejected log-prob against TRL's relative to {@code
 * max(1, |v|)}, leaves out the rows TRL drops, and fails when a dropped row has tokens in the
 * cache.
 */
class AgreementTest {
  @TempDir Path dir;

  private Map<String, Object> check(String cache, String trl) throws Exception {
    Path a = Files.writeString(dir.resolve("cache.json"), cache);
    Path b = Files.writeString(dir.resolve("trl.json"), trl);
    return Agreement.check(a, b);
  }

  @Test
  void withinToleranceRelativeToTheLargerOfOneAndTheValue() throws Exception {
    Map<String, Object> c =
        check(
            "{\"chosen_logp\": [-200.01, -0.5], \"rejected_logp\": [-3.0, -0.50002],"
                + " \"chosen_tokens\": [10, 2], \"rejected_tokens\": [4, 2]}",
            "{\"rows\": 2, \"dropped\": [], \"ref_chosen_logps\": [-200.0, -0.5],"
                + " \"ref_rejected_logps\": [-3.0, -0.5]}");
    assertEquals(4, c.get("values_compared"));
    assertEquals(0, c.get("outside_tolerance"));
    assertEquals(true, c.get("within_tolerance"));
    assertEquals(0.01 / 200.0, (Double) c.get("max_relative_diff"), 1e-9);
    assertEquals(0, c.get("worst_row"));
  }

  @Test
  void aDifferenceOverTheToleranceFails() throws Exception {
    Map<String, Object> c =
        check(
            "{\"chosen_logp\": [-1.0], \"rejected_logp\": [-2.001],"
                + " \"chosen_tokens\": [1], \"rejected_tokens\": [1]}",
            "{\"rows\": 1, \"dropped\": [], \"ref_chosen_logps\": [-1.0],"
                + " \"ref_rejected_logps\": [-2.0]}");
    assertEquals(1, c.get("outside_tolerance"));
    assertEquals(false, c.get("within_tolerance"));
  }

  @Test
  void rowsTrlDropsAreLeftOutAndMustHaveNoTokens() throws Exception {
    String trl =
        "{\"rows\": 2, \"dropped\": [1], \"ref_chosen_logps\": [-1.0, null],"
            + " \"ref_rejected_logps\": [-2.0, null]}";
    Map<String, Object> kept =
        check(
            "{\"chosen_logp\": [-1.0, 0], \"rejected_logp\": [-2.0, 0],"
                + " \"chosen_tokens\": [1, 0], \"rejected_tokens\": [1, 0]}",
            trl);
    assertEquals(2, kept.get("values_compared"));
    assertEquals(1, kept.get("rows_trl_dropped"));
    assertEquals(true, kept.get("within_tolerance"));
    Map<String, Object> counted =
        check(
            "{\"chosen_logp\": [-1.0, -5.0], \"rejected_logp\": [-2.0, 0],"
                + " \"chosen_tokens\": [1, 3], \"rejected_tokens\": [1, 0]}",
            trl);
    assertEquals(1, counted.get("trl_dropped_rows_with_tokens_in_cache"));
    assertEquals(false, counted.get("within_tolerance"));
  }

  @Test
  void missingValuesAreSaidAndNotWithinTolerance() {
    Map<String, Object> c = Agreement.check(dir.resolve("none.json"), dir.resolve("trl.json"));
    assertEquals(false, c.get("within_tolerance"));
    assertEquals(true, c.containsKey("left_out"));
  }
}
