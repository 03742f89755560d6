package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.store.tier.TierStats;

/** The memory section of {@code status}, line for line. */
class MemoryReportTest {
  private static final String A = "pekko://tensorcache@10.0.0.2:25520";
  private static final String B = "pekko://tensorcache@10.0.0.3:25520";

  @Test
  void perNodeItsHotTierAndPerTieredCacheItsHitsEvictionsAdmissionsAndPrefetchLead() {
    TierStats.Snapshot used =
        new TierStats.Snapshot(9200, 640, 160, 96, 31, 2, 3L << 29, 1L << 30, 12, 74, 0);
    TierStats.Snapshot untouched = new TierStats().snapshot();
    List<TierReporter.TierReport> reports =
        List.of(
            new TierReporter.TierReport(
                A,
                4L << 30,
                (3L << 30) / 2,
                (39L << 30) / 10,
                "lru",
                new TierReporter.CacheTiers[] {
                  new TierReporter.CacheTiers("dpo-ref-ab12", used),
                  new TierReporter.CacheTiers("embed-cd34", untouched)
                }),
            new TierReporter.TierReport(
                B, 512L << 20, 0, 1536, "lfu", new TierReporter.CacheTiers[0]));
    assertEquals(
        List.of(
            "memory (per node)",
            "  " + A + "  held 1.5 GiB / 4.0 GiB  peak 3.9 GiB  policy lru",
            "    dpo-ref-ab12  hits hot/warm/cold 9200/640/160 (92.0% hot)  evictions 31"
                + "  admissions 96  prefetch lead 6.2 steps",
            "    embed-cd34  hits hot/warm/cold 0/0/0 (- hot)  evictions 0  admissions 0"
                + "  prefetch lead -",
            "  " + B + "  held 0 B / 512.0 MiB  peak 1.5 KiB  policy lfu",
            "    no cache replicated by reference"),
        MemoryReport.lines(reports));
  }

  @Test
  void noAnswerIsSaid() {
    assertEquals(List.of("memory (per node)", "  no node answered"), MemoryReport.lines(List.of()));
  }

  @Test
  void bytesInBinaryUnitsUpToGiB() {
    assertEquals("1023 B", MemoryReport.bytes(1023));
    assertEquals("1.0 KiB", MemoryReport.bytes(1024));
    assertEquals("2.5 MiB", MemoryReport.bytes(5L << 19));
    assertEquals("2048.0 GiB", MemoryReport.bytes(2L << 40));
  }
}
