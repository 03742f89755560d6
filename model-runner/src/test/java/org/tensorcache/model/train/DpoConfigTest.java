package org.tensorcache.model.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class DpoConfigTest {
  @Test
  void badSettingsAreNamed() {
    assertEquals(
        "beta 0.0 invalid, expected a finite value > 0",
        assertThrows(IllegalArgumentException.class, () -> DpoConfig.DEFAULTS.withBeta(0))
            .getMessage());
    assertEquals(
        "beta NaN invalid, expected a finite value > 0",
        assertThrows(IllegalArgumentException.class, () -> DpoConfig.DEFAULTS.withBeta(Float.NaN))
            .getMessage());
    assertEquals(
        "learning_rate -1.0 invalid, expected a finite value > 0",
        assertThrows(IllegalArgumentException.class, () -> DpoConfig.DEFAULTS.withLearningRate(-1))
            .getMessage());
    assertEquals(
        "learning_rate Infinity invalid, expected a finite value > 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> DpoConfig.DEFAULTS.withLearningRate(Float.POSITIVE_INFINITY))
            .getMessage());
    assertEquals(
        "max_seq_len 3 invalid, expected >= 4",
        assertThrows(IllegalArgumentException.class, () -> new DpoConfig(0.1f, 1e-3f, 3))
            .getMessage());
  }

  @Test
  void withKeepsTheOtherSettings() {
    DpoConfig c = DpoConfig.DEFAULTS.withBeta(0.5f).withLearningRate(1e-4f);
    assertEquals(new DpoConfig(0.5f, 1e-4f, DpoConfig.DEFAULTS.maxSeqLen()), c);
  }
}
