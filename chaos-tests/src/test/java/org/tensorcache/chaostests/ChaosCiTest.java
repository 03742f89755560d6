package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorcache.testing.Postgres;

/** The CI profile of the chaos run: real node processes, seeded faults, every guarantee checked. */
class ChaosCiTest {
  @Test
  void everyGuaranteeHoldsUnderFaults() throws Exception {
    // .ci/run installs PostgreSQL and fails if this skipped; a fresh machine may not have it
    assumeTrue(
        Postgres.available(),
        "no PostgreSQL: set TENSORCACHE_PG_URL or install Debian's postgresql (bash .ci/run does)");
    // under target/, so that node logs stay for a look after a failure
    Path work = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "chaos-work");
    // four episodes with a shared data directory, each fill meeting a network partition (the
    // kinds in turn) and eight seeded faults, the first also a mass preemption; then one without a
    // shared disk: the object store and then the journal's PostgreSQL stopped for 20 s mid-fill,
    // the whole cluster preempted with its disks
    ChaosRun.Settings settings =
        new ChaosRun.Settings(
            20261122L, 4, 8, 1, 1, 1, Set.copyOf(CloudEpisode.OUTAGES), ChaosMain.JOB);
    ChaosReport report = new ChaosRun(settings, work, ChaosMain.launcher()).run();
    report.print(System.out);
    report.write(Path.of("target", "chaos-report.json"));
    assertTrue(report.ok(), report.summary());
  }
}
