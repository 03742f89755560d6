package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorcache.testing.Postgres;

/**
 * Three node processes that share no disk: each on an empty data directory of its own, segments in
 * a real S3-compatible server (S3Proxy), the journal in PostgreSQL. After the fill every range's
 * object is in the bucket; a node replaced by a fresh one, and then the whole cluster SIGKILLed
 * with every data directory deleted and three fresh nodes started, restore every range from the
 * bucket, compute none of them again, and serve values bit-equal to a single-process fill. The time
 * from the first fresh node process to every range restored and served goes to {@code
 * target/cloud-restore.json}.
 */
class NoSharedDiskTest {
  @Test
  void aClusterWithoutLocalDataRestoresEveryRangeFromObjectStorage() throws Exception {
    assumeTrue(
        Postgres.available(),
        "no PostgreSQL: set TENSORCACHE_PG_URL or install Debian's postgresql (bash .ci/run does)");
    Path work = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "cloud-work");
    ChaosRun.Settings settings =
        new ChaosRun.Settings(20261126L, 0, 0, 0, 0, 1, Set.of(), ChaosMain.JOB);
    ChaosReport report =
        new ChaosRun(settings, work, ChaosMain.launcher()).run(CloudEpisode.Plan.REPLACE_NODE);
    report.print(System.out);
    report.write(work.resolve("chaos-report.json"));
    assertTrue(report.ok(), report.summary());

    assertEquals(1, report.coldStarts.size(), "cold starts in " + report.summary());
    ChaosReport.ColdStart c = report.coldStarts.get(0);
    assertEquals(0, c.recomputed(), "persisted ranges computed again after the cold start");
    assertEquals(0L, report.recomputedPersisted.get(CloudEpisode.REPLACE), "after the replacement");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("nodes", 3);
    m.put("examples", c.examples());
    m.put("ranges", c.ranges());
    m.put("job", String.join(" ", ChaosMain.JOB));
    m.put("cold_start_to_nodes_up_ms", c.upMs());
    m.put("cold_start_to_all_ranges_restored_ms", c.restoredMs());
    m.put("cold_start_to_all_examples_served_ms", c.servedMs());
    m.put("persisted_ranges_recomputed", c.recomputed());
    m.put("cpus", Runtime.getRuntime().availableProcessors());
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(Path.of("target", "cloud-restore.json").toFile(), m);
    System.out.printf(
        "cold start without local data: nodes up in %d ms, %d ranges restored in %d ms, %d"
            + " examples served in %d ms%n",
        c.upMs(), c.ranges(), c.restoredMs(), c.examples(), c.servedMs());
  }
}
