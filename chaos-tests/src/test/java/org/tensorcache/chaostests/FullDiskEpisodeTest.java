package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.tensorcache.testing.Postgres;

/**
 * The full-disk episode alone (no seeded episodes before it), for working on it: {@code
 * -Dchaos.episode=full-disk}. {@link ChaosCiTest} runs it after its seeded episodes.
 */
@EnabledIfSystemProperty(named = "chaos.episode", matches = "full-disk")
class FullDiskEpisodeTest {
  @Test
  void fillCompletesAfterAFullDisk() throws Exception {
    assumeTrue(Postgres.available(), "no PostgreSQL: set TENSORCACHE_PG_URL or install postgresql");
    Path work = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "chaos-disk");
    ChaosRun.Settings settings = new ChaosRun.Settings(20261122L, 0, 0, ChaosMain.JOB);
    ChaosReport report = new ChaosRun(settings, work, ChaosMain.launcher()).run();
    report.print(System.out);
    report.write(work.resolve("chaos-report.json"));
    assertTrue(report.ok(), report.summary());
    assertTrue(
        report.skippedEpisodes.isEmpty() || !"root".equals(System.getProperty("user.name")),
        "skipped as root: " + report.skippedEpisodes);
  }
}
