package org.tensorcache.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.replica.TierReporter;

/**
 * A short-lived member with no roles that joins through the seeds, asks the coordinator and leaves:
 * what {@code status} and {@code fill} run on.
 */
public final class ClientNode implements AutoCloseable {
  /** The logger of Pekko's stream log stages, Artery's outbound connections' among them. */
  private static final String STREAM_LOGGER = "org.apache.pekko.stream.Materializer";

  private final NodeLauncher.Node node;

  private ClientNode(NodeLauncher.Node node) {
    this.node = node;
  }

  /**
   * Joins the cluster at {@code seeds} as {@code host} with the configuration {@code profiles}, or
   * fails naming the seeds once {@code within} has passed.
   */
  public static ClientNode join(
      String host, List<String> profiles, List<HostPort> seeds, Path dataDir, Duration within) {
    return join(host, profiles, Map.of(), seeds, dataDir, within);
  }

  /** As {@link #join(String, List, List, Path, Duration)}, with {@code settings} on top. */
  public static ClientNode join(
      String host,
      List<String> profiles,
      Map<String, Object> settings,
      List<HostPort> seeds,
      Path dataDir,
      Duration within) {
    List<String> seedNodes = seeds.stream().map(HostPort::toString).toList();
    return join(host, profiles, settings, seedNodes, null, dataDir, within);
  }

  /**
   * As {@link #join(String, List, Map, List, Path, Duration)}, through the members at the addresses
   * of {@code seeds}' name ({@link DnsJoiner}; a client never forms a cluster).
   */
  public static ClientNode join(
      String host,
      List<String> profiles,
      Map<String, Object> settings,
      DnsSeeds seeds,
      Path dataDir,
      Duration within) {
    return join(host, profiles, settings, List.of(), seeds, dataDir, within);
  }

  private static ClientNode join(
      String host,
      List<String> profiles,
      Map<String, Object> settings,
      List<String> seedNodes,
      DnsSeeds dns,
      Path dataDir,
      Duration within) {
    Map<String, Object> overrides = new HashMap<>(settings);
    overrides.putAll(NodeLauncher.clusterOverrides(host, 0, seedNodes, List.of()));
    if (dns != null) {
      overrides.put("pekko.cluster.seed-nodes", List.of()); // the DnsJoiner joins
    }
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    NodeLauncher.Node node =
        NodeLauncher.startClient(NodeLauncher.config(profiles, overrides, dataDir));
    if (dns != null) {
      DnsJoiner.start(node.system(), dns, false);
    }
    try {
      NodeLauncher.whenUp(node.system())
          .toCompletableFuture()
          .get(within.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      NodeLauncher.stop(node.system());
      throw new IllegalStateException(
          "no cluster reachable at "
              + (dns != null ? dns.toString() : String.join(",", seedNodes))
              + " within "
              + within.toSeconds()
              + " s");
    } catch (InterruptedException e) {
      NodeLauncher.stop(node.system());
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while joining", e);
    }
    return new ClientNode(node);
  }

  /** The member's ActorSystem and coordinator proxy. */
  public NodeLauncher.Node node() {
    return node;
  }

  /** The other members (not this one), as this member sees them. */
  public List<Member> members() {
    Cluster cluster = Cluster.get(node.system());
    List<Member> out = new ArrayList<>();
    for (Member m : cluster.state().getMembers()) {
      if (!m.equals(cluster.selfMember())) {
        out.add(m);
      }
    }
    return out;
  }

  /** The coordinator's status of every cache. */
  public Coordinator.Status status(Duration within) {
    return ask(Coordinator.GetStatus::new, within, "status");
  }

  /**
   * The hot-tier report of every node whose tier reporter answers within {@code within}, ordered by
   * node address; a node that does not answer in time is left out. The receptionist of a member
   * that just joined may not list every node yet: it is asked again until it lists a tier reporter
   * per node that is Up and reachable, for at most half of {@code within}.
   */
  public List<TierReporter.TierReport> tierReports(Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    Set<ActorRef<TierReporter.Command>> reporters = reporters(deadline - within.toNanos() / 2);
    Duration left = Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    List<CompletableFuture<TierReporter.TierReport>> asks = new ArrayList<>();
    for (ActorRef<TierReporter.Command> reporter : reporters) {
      asks.add(
          AskPattern.ask(reporter, TierReporter.GetTierStats::new, left, node.system().scheduler())
              .toCompletableFuture());
    }
    List<TierReporter.TierReport> reports = new ArrayList<>();
    for (CompletableFuture<TierReporter.TierReport> ask : asks) {
      try {
        reports.add(ask.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      } catch (ExecutionException | TimeoutException e) {
        // that node is left out of the report
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
    reports.sort(Comparator.comparing(TierReporter.TierReport::node));
    return reports;
  }

  /**
   * The tier reporters the receptionist lists once it lists one per node (a member with a role;
   * clients like this one have none) that is Up and reachable, or at {@code until} (a nano time).
   */
  private Set<ActorRef<TierReporter.Command>> reporters(long until) {
    try {
      while (true) {
        Set<ActorRef<TierReporter.Command>> found =
            AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                    node.system().receptionist(),
                    replyTo -> Receptionist.find(TierReporter.SERVICE_KEY, replyTo),
                    Duration.ofSeconds(5),
                    node.system().scheduler())
                .toCompletableFuture()
                .get(6, TimeUnit.SECONDS)
                .getServiceInstances(TierReporter.SERVICE_KEY);
        Set<Member> unreachable = Cluster.get(node.system()).state().getUnreachable();
        long nodes =
            members().stream()
                .filter(m -> m.status() == MemberStatus.up() && !unreachable.contains(m))
                .filter(m -> m.getRoles().stream().anyMatch(r -> !r.startsWith("dc-")))
                .count();
        if (found.size() >= nodes || System.nanoTime() >= until) {
          return found;
        }
        Thread.sleep(200);
      }
    } catch (ExecutionException | TimeoutException e) {
      return Set.of(); // the local receptionist did not answer: no node is found
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private <T> T ask(
      Function<ActorRef<T>, Coordinator.Command> message, Duration within, String what) {
    return await(
        AskPattern.ask(node.coordinator(), message::apply, within, node.system().scheduler()),
        within,
        what);
  }

  private static <T> T await(CompletionStage<T> reply, Duration within, String what) {
    try {
      return reply.toCompletableFuture().get(within.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TimeoutException) {
        throw new IllegalStateException(
            "the coordinator did not answer the " + what + " within " + within.toSeconds() + " s");
      }
      throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "the coordinator did not answer the " + what + " within " + within.toSeconds() + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * Leaves the cluster, waits until this member is removed, and stops it (bounded); a clean leave
   * logs no warning ({@link #quietTransportStop}).
   */
  @Override
  public void close() {
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(node.system());
    shutdown.addTask(
        CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
        "tensorcache-quiet-transport-stop",
        () -> {
          quietTransportStop();
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    shutdown
        .runAll(CoordinatedShutdown.clusterLeavingReason())
        .toCompletableFuture()
        .orTimeout(30, TimeUnit.SECONDS)
        .exceptionally(e -> null)
        .join();
    NodeLauncher.stop(node.system());
  }

  /**
   * Once this member has left and been removed (and only then), lowers to ERROR the logger that
   * Artery's outbound connections log their end through. Stopping the actor system stops the
   * transport, which aborts each outbound TCP connection; Pekko then logs the first end of each at
   * WARN ("[outbound connection to ...] Upstream failed, cause: StreamTcpException: The connection
   * has been aborted"), though nothing failed. After a clean removal nothing is left to send, and
   * the process exits right after; a leave that did not complete keeps every warning.
   */
  private void quietTransportStop() {
    if (Cluster.get(node.system()).selfMember().status() != MemberStatus.removed()) {
      return;
    }
    if (LoggerFactory.getLogger(STREAM_LOGGER) instanceof ch.qos.logback.classic.Logger logger) {
      logger.setLevel(ch.qos.logback.classic.Level.ERROR);
    }
  }
}
