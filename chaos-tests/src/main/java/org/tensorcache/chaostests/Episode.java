package org.tensorcache.chaostests;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.coordinator.CacheStatus;

/** One episode: a fill under faults, then a whole-cluster crash and a cold restart. */
final class Episode {
  private final ChaosRun chaosRun;
  private final int index;
  private final ChaosCluster cluster;
  private final Map<String, String> pg;
  private final ExpectedValues reference;
  private final CacheDefinition cache;
  private final CacheDefinition stored;

  /**
   * {@code cache}: the definition the client member registers; {@code stored}: one whose segment
   * directory holds the segments as the nodes keep them, for the checks (the same one when the
   * nodes share a data directory).
   */
  Episode(
      ChaosRun chaosRun,
      int index,
      ChaosCluster cluster,
      Map<String, String> pg,
      ExpectedValues reference,
      CacheDefinition cache,
      CacheDefinition stored) {
    this.chaosRun = chaosRun;
    this.index = index;
    this.cluster = cluster;
    this.pg = pg;
    this.reference = reference;
    this.cache = cache;
    this.stored = stored;
  }

  void run() throws Exception {
    ChaosReport report = chaosRun.report();
    ChaosRun.Settings settings = chaosRun.settings();
    SplittableRandom random = chaosRun.random();
    long since = System.currentTimeMillis();
    cluster.job(chaosRun.jobArgs(index));
    Phase fill = new Phase(this);
    fill.start();
    List<PartitionFault.Kind> kinds = PartitionFault.SCHEDULED;
    for (int p = 0; p < settings.partitionsPerEpisode() && report.failure == null; p++) {
      // a random of its own, so that the other faults' schedule stays that of the seed
      int turn = index * settings.partitionsPerEpisode() + p;
      fill.inject(kinds.get(turn % kinds.size()), new SplittableRandom(settings.seed() + turn));
    }
    if (index < settings.massPreemptions() && report.failure == null) {
      fill.injectMassPreemption(new SplittableRandom(settings.seed() - 1 - index));
    }
    for (int f = 0; f < settings.faultsPerEpisode() && report.failure == null; f++) {
      Faults.Kind kind = Faults.Kind.values()[random.nextInt(Faults.Kind.values().length)];
      fill.inject(kind);
    }
    fill.finish("episode " + index + " fill");
    JournalRanges.check(report, "ep" + index + " fill", fill.client(), cache, since, Set.of());
    // the whole cluster crashes; segments are damaged while it is down; a cold start follows
    List<Integer> done = new ArrayList<>(Faults.persisted(cache.segmentDir()));
    done.sort(null);
    fill.closeClient();
    long t0 = System.nanoTime();
    cluster.killAll();
    report.fault(new ChaosReport.Fault(index, "SIGKILL_ALL", false, -1, -1));
    int truncated = done.get(random.nextInt(done.size()));
    int corrupted = done.size() < 2 ? truncated : done.get(random.nextInt(done.size()));
    while (corrupted == truncated && done.size() > 1) {
      corrupted = done.get(random.nextInt(done.size())); // two damaged segments, not one
    }
    Faults.truncate(cache.segmentDir().resolve(rangeFile(truncated)));
    report.fault(new ChaosReport.Fault(index, "TRUNCATE_SEGMENT", false, -1, -1));
    if (corrupted != truncated) {
      Faults.corrupt(cache.segmentDir().resolve(rangeFile(corrupted)));
      report.fault(new ChaosReport.Fault(index, "CORRUPT_SEGMENT", false, -1, -1));
    }
    Set<Integer> damaged = Set.of(truncated, corrupted);
    Phase restart = new Phase(this);
    restart.start();
    List<String> trainerJob = new ArrayList<>(chaosRun.jobArgs(index));
    trainerJob.addAll(List.of("--data-dir", cache.segmentDir().getParent().getParent().toString()));
    TrainerPreemption trainer =
        new TrainerPreemption(this, trainerJob, chaosRun.work().resolve("logs"));
    trainer.startFirst(); // a trainer reads steps while the cluster restores the cache
    long served = restart.servingSince(t0);
    restart.recovered("SIGKILL_ALL", t0); // while the phase's lookups run: finish stops them
    restart.finish("episode " + index + " cold restart");
    // the damaged ranges were recorded before the damage: now rewritten, they must verify too
    JournalRanges.check(
        report, "ep" + index + " cold restart", restart.client(), cache, since, Set.of());
    report.faults.set(
        report.faults.size() - (damaged.size() + 1),
        new ChaosReport.Fault(
            index, "SIGKILL_ALL", false, served, (System.nanoTime() - t0) / 1_000_000));
    Set<Integer> kept = new HashSet<>(done);
    kept.removeAll(damaged);
    long repeated = Faults.computedIn(cluster.live(), Map.of(), cache.cacheId(), kept);
    long recomputed = Faults.computedIn(cluster.live(), Map.of(), cache.cacheId(), damaged);
    report.repeated += repeated;
    report.recomputedAfterCorruption += recomputed;
    report.check(
        "ep" + index + " cold restart: persisted ranges not recomputed",
        repeated == 0,
        repeated + " examples");
    report.check(
        "ep" + index + " damaged segments recomputed", recomputed > 0, recomputed + " examples");
    boolean rejected = true;
    for (int r : damaged) {
      rejected &= rejectionLogged(r);
    }
    report.check("ep" + index + " damaged segments rejected", rejected, "ranges " + damaged);
    TrainerPreemption.Result t = trainer.finish();
    report.skipped += t.skipped();
    report.repeated += t.repeated();
    report.fault(new ChaosReport.Fault(index, "SIGKILL_TRAINER", false, -1, t.resumedRunMs()));
    report.check(
        "ep" + index + " trainer resumed from step " + t.checkpoint() + " as uninterrupted",
        t.skipped() == 0 && t.repeated() == 0,
        "skipped " + t.skipped() + " repeated " + t.repeated());
    restart.stopGracefully();
    JournalWriters.check(pg, report, "ep" + index); // the journal of every episode so far
  }

  private boolean rejectionLogged(int range) throws Exception {
    for (NodeProcess n : cluster.live()) {
      String text = n.logText();
      if (text.contains("range " + range + " of " + cache.cacheId() + " not restored")
          || text.contains("segment of range " + range + " of " + cache.cacheId() + " not used")) {
        return true;
      }
    }
    return false;
  }

  String rangeFile(int range) {
    return org.tensorcache.store.segment.SegmentStore.fileName(range);
  }

  ChaosCluster cluster() {
    return cluster;
  }

  Map<String, String> pg() {
    return pg;
  }

  ExpectedValues reference() {
    return reference;
  }

  CacheDefinition cache() {
    return cache;
  }

  CacheDefinition stored() {
    return stored;
  }

  Path work() {
    return chaosRun.work();
  }

  int index() {
    return index;
  }

  ChaosReport report() {
    return chaosRun.report();
  }

  SplittableRandom random() {
    return chaosRun.random();
  }

  CacheStatus status(ClientMember client) {
    return client.status(Duration.ofSeconds(5));
  }
}
