package org.tensorcache.cli;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.launch.ClientNode;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.ComputeOptions;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.OptionRanges;
import org.tensorcache.launch.TeacherJob;
import org.tensorcache.launch.TeacherJobs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Fills the job's cache: on the cluster (the coordinator drives the nodes; this command follows it
 * until every range is persisted), or with {@code --local} in this process alone.
 */
@Command(
    name = "fill",
    mixinStandardHelpOptions = true,
    description = "Fill the job's cache on the cluster, or with --local in this process.")
final class FillCommand implements Callable<Integer> {

  @Mixin JobOptions job;
  @Mixin ComputeOptions compute;
  @Mixin ClusterOptions cluster;

  @Option(
      names = "--local",
      description = "Fill in this process alone, no cluster (the single-process reference).")
  boolean local;

  @Option(
      names = "--timeout",
      defaultValue = "30",
      description = "Seconds to wait for the cluster and each answer (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Override
  public Integer call() throws Exception {
    if (local && job.perToken()) {
      try (TeacherJob teacher = TeacherJobs.prepare(job)) {
        LocalFillRun.run(teacher);
      }
      return 0;
    }
    if (local) {
      LocalFillRun.run(job.prepare(compute));
      return 0;
    }
    Duration timeout = OptionRanges.seconds("--timeout", timeoutSeconds);
    // the nodes compute: this member only needs the cache id, and writes no cache of its own
    String cacheId = job.identifyMakingInputs().cacheId();
    try (ClientNode client = cluster.join(job.dataDir(), timeout)) {
      CacheStatus first =
          ClusterFill.status(client.node().system(), client.node().coordinator(), cacheId);
      long t0 = System.nanoTime();
      CacheStatus last =
          ClusterFill.run(client.node().system(), client.node().coordinator(), cacheId, true);
      double seconds = (System.nanoTime() - t0) / 1e9;
      long computed = last.present() - first.present();
      System.out.printf(
          "filled %s: %d examples in %d ranges persisted; %d computed in %.1f s (%s examples/s),"
              + " %d members%n",
          cacheId,
          last.examples(),
          last.persistedRanges(),
          computed,
          seconds,
          computed > 0 ? String.format("%.0f", computed / seconds) : "-",
          client.members().size());
    }
    return 0;
  }
}
