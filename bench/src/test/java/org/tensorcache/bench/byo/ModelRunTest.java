package org.tensorcache.bench.byo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The best batch, medians, ratios and what is left out of one model's measurements. */
class ModelRunTest {
  private static Measurement rate(double examplesPerS, long peak) {
    return new Measurement(null, Map.of("examples_per_s", examplesPerS, "peak_rss_mib", peak));
  }

  private static ModelRun run() {
    return new ModelRun("small", "a model", Map.of());
  }

  @Test
  void theSweepPicksTheFastestBatchThatRan() {
    ModelRun m = run();
    m.trlSweep.put(2, rate(3, 1));
    m.trlSweep.put(4, rate(5, 1));
    m.trlSweep.put(8, rate(4, 1));
    m.trlSweep.put(16, Measurement.missing("not run: memory"));
    assertEquals(4, m.bestBatch());
  }

  @Test
  void mediansAndRatiosOverTheRoundsThatMeasured() {
    ModelRun m = run();
    double[][] rounds = {{10, 2}, {30, 4}, {20, 3}};
    for (double[] r : rounds) {
      Map<String, Measurement> round = new LinkedHashMap<>();
      round.put("tensorcache", rate(r[0], 100));
      round.put("trl_default", rate(r[1], 1000));
      round.put("trl_best", Measurement.missing("no batch size of the sweep ran"));
      m.rounds.add(round);
    }
    assertEquals(20, m.rate("tensorcache"));
    assertEquals(3, m.rate("trl_default"));
    assertEquals(6.667, m.ratio("trl_default"));
    assertNull(m.ratio("trl_best"));
    assertEquals("no batch size of the sweep ran", m.missing("trl_best"));
    assertNull(m.missing("tensorcache"));
    assertTrue(m.toMap().containsKey("medians"));
  }

  @Test
  void twoRoundsTakeTheMeanOfTheMiddle() {
    ModelRun m = run();
    for (double r : new double[] {4, 6}) {
      m.rounds.add(Map.of("tensorcache", rate(r, 1)));
    }
    assertEquals(5, m.rate("tensorcache"));
  }
}
