package org.tensorcache.chaostests;

import java.nio.file.Files;
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
import org.tensorcache.launch.JobDefinitions;

/**
 * A chaos run: episodes of a fill on three node processes with faults from a seeded schedule, then
 * a whole-cluster crash, corrupted segments and a cold restart; every guarantee checked after each.
 */
final class ChaosRun {
  /**
   * What a run is made of; the job options are those of {@code tensorcache node}; each episode's
   * fill meets {@code partitionsPerEpisode} network partitions first (the kinds in turn). The cloud
   * episodes follow the others, on a cluster of their own without a shared disk ({@link
   * CloudEpisode}), with the {@code outages} named (of {@link CloudEpisode#OUTAGES}).
   */
  record Settings(
      long seed,
      int episodes,
      int faultsPerEpisode,
      int partitionsPerEpisode,
      int cloudEpisodes,
      Set<String> outages,
      List<String> job) {
    /** Episodes on the shared data directory only, with no partitions and no cloud episodes. */
    Settings(long seed, int episodes, int faultsPerEpisode, List<String> job) {
      this(seed, episodes, faultsPerEpisode, 0, 0, Set.of(), job);
    }
  }

  private final Settings settings;
  private final Path work;
  private final Path launcher;
  private final ChaosReport report = new ChaosReport();
  private final SplittableRandom random;

  ChaosRun(Settings settings, Path work, Path launcher) {
    this.settings = settings;
    this.work = work;
    this.launcher = launcher;
    this.random = new SplittableRandom(settings.seed());
  }

  /** Runs every episode, the cloud ones with outages; the report, also when a step fails. */
  ChaosReport run() throws Exception {
    return run(CloudEpisode.Plan.OUTAGES);
  }

  /** Runs every episode, the cloud ones with {@code plan}; the report, also when a step fails. */
  ChaosReport run(CloudEpisode.Plan plan) throws Exception {
    long t0 = System.nanoTime();
    Path refDir = work.resolve("reference");
    Path dataDir = work.resolve("data");
    Files.createDirectories(work.resolve("logs"));
    try {
      Reference reference = Reference.load(referenceFill(refDir));
      // a cloud-only run (cloud episodes and nothing else) needs no cluster on a shared disk
      if (settings.episodes() > 0 || settings.cloudEpisodes() == 0) {
        try (Postgres pg = Postgres.obtain();
            ChaosCluster cluster =
                new ChaosCluster(launcher, dataDir, work.resolve("logs"), pg.env())) {
          if (settings.partitionsPerEpisode() > 0) {
            cluster.partitionable(); // every member behind a proxy, so partitions can cut it off
          }
          copyInputs(refDir, dataDir);
          for (int e = 0; e < settings.episodes() && report.failure == null; e++) {
            CacheDefinition cache = definition(dataDir, e, List.of());
            new Episode(e, cluster, pg.env(), reference, cache, cache).run();
          }
          if (report.failure == null) {
            int e = settings.episodes(); // a full disk during a fill, after the seeded episodes
            cluster.job(jobArgs(e));
            CacheDefinition cache = definition(dataDir, e, List.of());
            new FullDiskEpisode(new Episode(e, cluster, pg.env(), reference, cache, cache), work)
                .run();
          }
        }
      }
      for (int c = 0; c < settings.cloudEpisodes() && report.failure == null; c++) {
        cloudEpisode(settings.episodes() + 1 + c, reference, refDir, plan);
      }
    } catch (Exception | AssertionError e) {
      if (report.failure == null) {
        report.failure = e.toString();
      }
    } finally {
      report.seconds = (System.nanoTime() - t0) / 1_000_000_000L;
    }
    return report;
  }

  private List<String> jobArgs(int episode) {
    List<String> args = new ArrayList<>(settings.job());
    args.addAll(List.of("--cache-name", "chaos-e" + episode));
    return args;
  }

  private CacheDefinition definition(Path dataDir, int episode, List<String> more)
      throws Exception {
    List<String> args = new ArrayList<>(jobArgs(episode));
    args.addAll(List.of("--data-dir", dataDir.toString()));
    args.addAll(more);
    return JobDefinitions.definition(args.toArray(String[]::new));
  }

  /**
   * A cloud episode on a cluster of its own: nodes on empty data directories of their own, segments
   * in object storage (S3Proxy), the journal in a PostgreSQL server this run may stop.
   */
  private void cloudEpisode(int index, Reference reference, Path refDir, CloudEpisode.Plan plan)
      throws Exception {
    Path dir = work.resolve("cloud-e" + index);
    Path member = dir.resolve("member"); // the client member's data directory
    copyInputs(refDir, member);
    try (Postgres pg = Postgres.stoppable();
        ObjectStore store = ObjectStore.start(dir.resolve("s3"));
        ChaosCluster cluster =
            new ChaosCluster(launcher, dir.resolve("nodes"), work.resolve("logs"), pg.env())) {
      List<String> nodeArgs = new ArrayList<>(store.nodeArgs());
      nodeArgs.addAll(NodeOps.ARGS);
      cluster.ownDataDirs(nodeArgs, store.env());
      cluster.job(jobArgs(index));
      CacheDefinition cache = definition(member, index, store.nodeArgs());
      // the same segments read as the files S3Proxy keeps them in, by the checks only
      CacheDefinition stored =
          definition(member, index, List.of("--segments", store.directory().toString()));
      Episode ep = new Episode(index, cluster, pg.env(), reference, cache, stored);
      new CloudEpisode(ep, store, pg, settings.outages()).run(plan);
    }
  }

  /** {@code ./tensorcache fill --local}: the single-process reference, and the inputs made once. */
  private CacheDefinition referenceFill(Path refDir) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(launcher.toString(), "fill", "--local"));
    cmd.addAll(settings.job());
    cmd.addAll(List.of("--data-dir", refDir.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(work.resolve("logs").resolve("reference.log").toFile());
    pb.environment().put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    pb.environment().put("JAVA_OPTS", "-Xmx384m");
    Process p = pb.start();
    if (!p.waitFor(600, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException("reference fill failed, see logs/reference.log");
    }
    List<String> args = new ArrayList<>(settings.job());
    args.addAll(List.of("--data-dir", refDir.toString()));
    return JobDefinitions.definition(args.toArray(String[]::new));
  }

  /** The data set and model the reference was made from, so nodes never race to make them. */
  private static void copyInputs(Path from, Path to) throws Exception {
    for (String sub : List.of("datasets", "models")) {
      try (var files = Files.walk(from.resolve(sub))) {
        for (Path f : (Iterable<Path>) files::iterator) {
          Path target = to.resolve(from.relativize(f).toString());
          if (Files.isDirectory(f)) {
            Files.createDirectories(target);
          } else {
            Files.copy(f, target);
          }
        }
      }
    }
  }

  /** One episode: a fill under faults, then a whole-cluster crash and a cold restart. */
  final class Episode {
    private final int index;
    private final ChaosCluster cluster;
    private final Map<String, String> pg;
    private final Reference reference;
    private final CacheDefinition cache;
    private final CacheDefinition stored;

    /**
     * {@code cache}: the definition the client member registers; {@code stored}: one whose segment
     * directory holds the segments as the nodes keep them, for the checks (the same one when the
     * nodes share a data directory).
     */
    Episode(
        int index,
        ChaosCluster cluster,
        Map<String, String> pg,
        Reference reference,
        CacheDefinition cache,
        CacheDefinition stored) {
      this.index = index;
      this.cluster = cluster;
      this.pg = pg;
      this.reference = reference;
      this.cache = cache;
      this.stored = stored;
    }

    void run() throws Exception {
      long since = System.currentTimeMillis();
      cluster.job(jobArgs(index));
      Phase fill = new Phase(this);
      fill.start();
      List<PartitionFault.Kind> kinds = PartitionFault.SCHEDULED;
      for (int p = 0; p < settings.partitionsPerEpisode() && report.failure == null; p++) {
        // a random of its own, so that the other faults' schedule stays that of the seed
        int turn = index * settings.partitionsPerEpisode() + p;
        fill.inject(kinds.get(turn % kinds.size()), new SplittableRandom(settings.seed() + turn));
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
      List<String> trainerJob = new ArrayList<>(jobArgs(index));
      trainerJob.addAll(
          List.of("--data-dir", cache.segmentDir().getParent().getParent().toString()));
      TrainerPreemption trainer = new TrainerPreemption(this, trainerJob, work.resolve("logs"));
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
            || text.contains(
                "segment of range " + range + " of " + cache.cacheId() + " not used")) {
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

    Reference reference() {
      return reference;
    }

    CacheDefinition cache() {
      return cache;
    }

    CacheDefinition stored() {
      return stored;
    }

    Path work() {
      return work;
    }

    int index() {
      return index;
    }

    ChaosReport report() {
      return report;
    }

    SplittableRandom random() {
      return random;
    }

    CacheStatus status(ClientMember client) {
      return client.status(Duration.ofSeconds(5));
    }
  }
}
