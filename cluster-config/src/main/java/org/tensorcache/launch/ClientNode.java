package org.tensorcache.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.coordinator.Coordinator;

/**
 * A short-lived member with no roles that joins through the seeds, asks the coordinator and leaves:
 * what {@code status} and {@code fill} run on.
 */
public final class ClientNode implements AutoCloseable {
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
    Map<String, Object> overrides =
        new HashMap<>(
            NodeLauncher.clusterOverrides(
                host, 0, seeds.stream().map(HostPort::toString).toList(), List.of()));
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    NodeLauncher.Node node =
        NodeLauncher.startClient(NodeLauncher.config(profiles, overrides, dataDir));
    try {
      NodeLauncher.whenUp(node.system())
          .toCompletableFuture()
          .get(within.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      NodeLauncher.stop(node.system());
      throw new IllegalStateException(
          "no cluster reachable at "
              + String.join(",", seeds.stream().map(HostPort::toString).toList())
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

  /** Leaves the cluster and stops this member (bounded). */
  @Override
  public void close() {
    CoordinatedShutdown.get(node.system())
        .runAll(CoordinatedShutdown.clusterLeavingReason())
        .toCompletableFuture()
        .orTimeout(30, TimeUnit.SECONDS)
        .exceptionally(e -> null)
        .join();
    NodeLauncher.stop(node.system());
  }
}
