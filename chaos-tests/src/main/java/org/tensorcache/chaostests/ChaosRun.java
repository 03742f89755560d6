package org.tensorcache.chaostests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.testing.Postgres;
import org.tensorcache.testing.Reaper;

/**
 * A chaos run: episodes of a fill on three node processes with faults from a seeded schedule, then
 * a whole-cluster crash, corrupted segments and a cold restart; every guarantee checked after each.
 */
final class ChaosRun {
  /**
   * What a run is made of; the job options are those of {@code tensorcache node}; each episode's
   * fill meets {@code partitionsPerEpisode} network partitions first (the kinds in turn), and the
   * fills of the first {@code massPreemptions} episodes a {@link MassPreemption} next. The cloud
   * episodes follow the others, on a cluster of their own without a shared disk ({@link
   * CloudEpisode}), with the {@code outages} named (of {@link CloudEpisode#OUTAGES}).
   */
  record Settings(
      long seed,
      int episodes,
      int faultsPerEpisode,
      int partitionsPerEpisode,
      int massPreemptions,
      int cloudEpisodes,
      Set<String> outages,
      List<String> job) {
    /** Episodes on the shared data directory only, with no partitions and no cloud episodes. */
    Settings(long seed, int episodes, int faultsPerEpisode, List<String> job) {
      this(seed, episodes, faultsPerEpisode, 0, 0, 0, Set.of(), job);
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
      ExpectedValues reference = ExpectedValues.load(referenceFill(refDir));
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
            new Episode(this, e, cluster, pg.env(), reference, cache, cache).run();
          }
          if (report.failure == null) {
            int e = settings.episodes(); // a full disk during a fill, after the seeded episodes
            cluster.job(jobArgs(e));
            CacheDefinition cache = definition(dataDir, e, List.of());
            new FullDiskEpisode(
                    new Episode(this, e, cluster, pg.env(), reference, cache, cache), work)
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

  List<String> jobArgs(int episode) {
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
  private void cloudEpisode(
      int index, ExpectedValues reference, Path refDir, CloudEpisode.Plan plan) throws Exception {
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
      Episode ep = new Episode(this, index, cluster, pg.env(), reference, cache, stored);
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
    Process p = Reaper.start(pb);
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

  Settings settings() {
    return settings;
  }

  ChaosReport report() {
    return report;
  }

  SplittableRandom random() {
    return random;
  }

  Path work() {
    return work;
  }
}
