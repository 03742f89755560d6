package org.tensorcache.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.pekko.cluster.Member;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.launch.ClientNode;
import org.tensorcache.launch.HostPort;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.OptionRanges;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Joins the cluster briefly and prints its members, the coverage of every cache and each node's hot
 * tier.
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description =
        "Print the cluster's members, each cache's coverage and persistence, and each node's"
            + " memory: its hot tier and the hits per tier of the caches replicated by reference.")
final class StatusCommand implements Callable<Integer> {
  static final List<HostPort> DEFAULT_SEEDS = List.of(new HostPort("127.0.0.1", 25520));

  // accepted so that one option line serves node, status and fill; status reads only --data-dir
  @Mixin JobOptions job;
  @Mixin ClusterOptions cluster;

  @Option(
      names = "--timeout",
      defaultValue = "30",
      description =
          "Seconds to wait for the cluster, the coordinator and each node's memory report"
              + " (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Override
  public Integer call() {
    Duration timeout = OptionRanges.seconds("--timeout", timeoutSeconds);
    try (ClientNode client = cluster.join(job.dataDir(), timeout)) {
      Coordinator.Status status = client.status(timeout);
      print(client.members(), status);
      MemoryReport.lines(client.tierReports(timeout)).forEach(System.out::println);
    }
    return 0;
  }

  static void print(List<Member> members, Coordinator.Status status) {
    System.out.printf("members (%d)%n", members.size());
    for (Member m : members) {
      String roles =
          m.getRoles().stream()
              .filter(r -> !r.startsWith("dc-"))
              .sorted()
              .collect(Collectors.joining(","));
      System.out.printf(
          "  %-36s %-8s %s%n", m.address(), m.status(), roles.isEmpty() ? "-" : roles);
    }
    System.out.printf("caches (%d)%n", status.caches().length);
    for (CacheStatus c : status.caches()) {
      System.out.printf("  %s%n", describe(c));
    }
  }

  static String describe(CacheStatus c) {
    return String.format(
        "%s  examples %d/%d present  ranges %d/%d complete, %d/%d persisted  %s",
        c.cacheId(),
        c.present(),
        c.examples(),
        c.completeRanges(),
        c.ranges(),
        c.persistedRanges(),
        c.ranges(),
        c.persistedRanges() == c.ranges() ? "done" : c.filling() ? "filling" : "idle");
  }
}
