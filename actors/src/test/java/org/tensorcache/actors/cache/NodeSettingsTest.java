package org.tensorcache.actors.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class NodeSettingsTest {
  private static Config with(String overrides) {
    return ConfigFactory.parseString(overrides).withFallback(ConfigFactory.load()).resolve();
  }

  @Test
  void theDefaultBudgetFitsTheDefaultFrame() {
    assertEquals(128 << 10, NodeSettings.create(ConfigFactory.load()).gossipBudget());
  }

  @Test
  void aBudgetOverHalfTheFrameIsRefusedNamingBothSettings() {
    Config c =
        with(
            "tensorcache.replication.gossip-budget = 2 MiB\n"
                + "pekko.remote.artery.advanced.maximum-frame-size = 2 MiB");
    var e = assertThrows(IllegalArgumentException.class, () -> NodeSettings.create(c));
    assertTrue(e.getMessage().contains("gossip-budget is 2097152 bytes"), e.getMessage());
    assertTrue(e.getMessage().contains("maximum-frame-size (2097152 bytes)"), e.getMessage());
  }

  @Test
  void aBudgetOfHalfTheFrameIsTaken() {
    Config c =
        with(
            "tensorcache.replication.gossip-budget = 1 MiB\n"
                + "pekko.remote.artery.advanced.maximum-frame-size = 2 MiB");
    assertEquals(1 << 20, NodeSettings.create(c).gossipBudget());
  }

  @Test
  void aBudgetOfNothingIsRefused() {
    Config c = with("tensorcache.replication.gossip-budget = 0");
    var e = assertThrows(IllegalArgumentException.class, () -> NodeSettings.create(c));
    assertTrue(e.getMessage().contains("expected more than 0"), e.getMessage());
  }
}
