package org.tensorcache.chaostests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.store.io.AtomicFiles;

/**
 * An episode with a full disk during a fill: the cache's segment directory is a small tmpfs that a
 * filler file makes full once a few ranges are persisted, so that segment writes fail with ENOSPC;
 * it stays full a while, then the filler goes. Checked: no half-written file under a segment name,
 * the journal records as persisted only ranges whose segment verifies, lookups go on bit for bit,
 * the fill completes once space is back, nothing persisted is computed again, and no temporary file
 * is left. Where a tmpfs cannot be mounted the episode is skipped with the reason in the report,
 * and fails instead under {@code CI=true}.
 */
final class FullDiskEpisode {
  /** How long the disk stays full once the first segment write failed. */
  private static final Duration FULL_FOR = Duration.ofSeconds(6);

  private final Episode ep;
  private final Path work;

  FullDiskEpisode(Episode ep, Path work) {
    this.ep = ep;
    this.work = work;
  }

  void run() throws Exception {
    ChaosReport report = ep.report();
    String name = "ep" + ep.index() + " full disk";
    String reason = FullDisk.unavailable(work.resolve("mount-check"));
    if (reason != null) {
      if ("true".equals(System.getenv("CI"))) {
        report.check(name + ": a tmpfs can be mounted (CI=true)", false, reason);
      } else {
        report.skippedEpisodes.put(name, reason);
      }
      return;
    }
    long since = System.currentTimeMillis();
    Path segments = ep.cache().segmentDir();
    try (FullDisk disk = FullDisk.mount(segments, tmpfsBytes())) {
      Phase phase = new Phase(ep);
      phase.start();
      CacheStatus before = awaitPersisted(phase, 2);
      Set<Integer> persisted = Faults.persisted(segments);
      Map<NodeProcess, Integer> marks = Faults.marks(ep.cluster().live());
      long t0 = System.nanoTime();
      long filler = disk.fill();
      phase.recovered("DISK_FULL", t0);
      boolean enospc = awaitEnospc(marks, Duration.ofSeconds(120));
      report.check(
          name + ": segment writes failed with ENOSPC",
          enospc,
          "filler " + filler + " bytes, " + before.persistedRanges() + " ranges persisted before");
      Thread.sleep(FULL_FOR.toMillis());
      report.check(
          name + ": no half-written segment while full",
          JournalRanges.halfWritten(ep.cache()).isEmpty(),
          JournalRanges.halfWritten(ep.cache()).toString());
      JournalRanges.check(
          report, name + " while full", phase.client(), ep.cache(), since, Set.of());
      disk.free();
      long freed = System.nanoTime();
      phase.finish(name);
      report.fault(
          new ChaosReport.Fault(
              ep.index(),
              "DISK_FULL",
              before.persistedRanges() < before.ranges(),
              -1,
              (System.nanoTime() - freed) / 1_000_000));
      report.check(
          name + ": no half-written segment",
          JournalRanges.halfWritten(ep.cache()).isEmpty(),
          JournalRanges.halfWritten(ep.cache()).toString());
      JournalRanges.check(report, name, phase.client(), ep.cache(), since, Set.of());
      List<String> temps = temporaries(segments);
      report.check(name + ": temporary files deleted", temps.isEmpty(), temps.toString());
      long repeated =
          Faults.computedIn(ep.cluster().live(), marks, ep.cache().cacheId(), persisted);
      report.repeated += repeated;
      report.check(
          name + ": persisted ranges not recomputed", repeated == 0, repeated + " examples");
      phase.stopGracefully();
    }
  }

  /** Twice what the reference's segments take: the fill fits, the filler has room to take. */
  private long tmpfsBytes() throws Exception {
    long total = 0;
    try (var files = Files.walk(work.resolve("reference"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (f.getFileName().toString().endsWith(".safetensors")) {
          total += Files.size(f);
        }
      }
    }
    return Math.max(4L << 20, 2 * total);
  }

  /** Waits (bounded) until at least {@code ranges} are persisted; the status then. */
  private CacheStatus awaitPersisted(Phase phase, int ranges) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (true) {
      CacheStatus s = ep.status(phase.client());
      if (s != null && s.persistedRanges() >= ranges) {
        return s;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "full disk: " + ranges + " ranges not persisted within 180 s: " + s);
      }
      Thread.sleep(100);
    }
  }

  /** Whether a node logged a segment write that failed for want of space, after its mark. */
  private boolean awaitEnospc(Map<NodeProcess, Integer> marks, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      for (NodeProcess n : ep.cluster().live()) {
        String text = n.logText();
        String after = text.substring(Math.min(text.length(), marks.getOrDefault(n, 0)));
        if (after.contains("not written") && after.contains("No space left on device")) {
          return true;
        }
      }
      Thread.sleep(200);
    }
    return false;
  }

  private static List<String> temporaries(Path dir) throws Exception {
    try (var files = Files.newDirectoryStream(dir, AtomicFiles.TEMP_PREFIX + "*")) {
      List<String> out = new java.util.ArrayList<>();
      files.forEach(f -> out.add(f.getFileName().toString()));
      return out;
    }
  }
}
