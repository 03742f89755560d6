package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where a node's settings come from: explicit overrides, then system properties, then profiles. */
class NodeLauncherConfigTest {
  private static final String STABLE_AFTER = "pekko.cluster.split-brain-resolver.stable-after";
  private static final String PORT = "pekko.remote.artery.canonical.port";

  @Test
  void systemPropertiesOverrideProfilesButNotExplicitOverrides() {
    System.setProperty(STABLE_AFTER, "3s");
    System.setProperty(PORT, "1");
    ConfigFactory.invalidateCaches();
    try {
      Config c =
          NodeLauncher.config(List.of("cluster"), Map.of(PORT, 2552), Path.of("target", "cfg"));
      assertEquals(Duration.ofSeconds(3), c.getDuration(STABLE_AFTER));
      assertEquals(2552, c.getInt(PORT));
    } finally {
      System.clearProperty(STABLE_AFTER);
      System.clearProperty(PORT);
      ConfigFactory.invalidateCaches();
    }
    Config c = NodeLauncher.config(List.of("cluster"), Map.of(), Path.of("target", "cfg"));
    assertEquals(Duration.ofSeconds(7), c.getDuration(STABLE_AFTER));
  }
}
