package org.tensorcache.chaostests;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.launch.NodeLauncher;

/**
 * A cluster member in this JVM with role {@code lookup} and the cache registered: it asks the
 * coordinator and looks values up through {@link TensorCacheClient}, as a trainer would.
 */
final class ClientMember implements AutoCloseable {
  private final NodeLauncher.Node node;
  private final TensorCacheClient client;
  private final String cacheId;

  private ClientMember(NodeLauncher.Node node, String cacheId) {
    this.node = node;
    this.cacheId = cacheId;
    this.client = TensorCacheClient.create(node.system());
  }

  /** Joins through {@code seedPorts} on loopback and waits until Up (bounded). */
  static ClientMember join(
      List<Integer> seedPorts, Path dataDir, Map<String, String> pg, CacheDefinition cache) {
    return join(seedPorts, dataDir, pg, cache, Map.of());
  }

  /** {@link #join} with {@code transport} overrides on top (a proxy's ports, see ChaosCluster). */
  static ClientMember join(
      List<Integer> seedPorts,
      Path dataDir,
      Map<String, String> pg,
      CacheDefinition cache,
      Map<String, Object> transport) {
    Map<String, Object> o =
        new HashMap<>(
            NodeLauncher.clusterOverrides(
                "127.0.0.1",
                0,
                seedPorts.stream().map(p -> "127.0.0.1:" + p).toList(),
                List.of("lookup")));
    // a member of the test JVM must never exit it, whatever happens to the cluster
    o.put("pekko.coordinated-shutdown.exit-jvm", "off");
    o.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    o.put("pekko.cluster.singleton.role", ChaosCluster.SINGLETON_ROLE);
    // a lookup of values not computed yet waits this long after the last membership change: with
    // lease-majority downing, faults in a row on two loaded cores kept one past the default 30 s
    o.put("tensorcache.lookup.timeout", "60s");
    o.putAll(ChaosCluster.TIMING);
    o.put("tensorcache.persistence.postgres.url", pg.get("TENSORCACHE_PG_URL"));
    o.put("tensorcache.persistence.postgres.user", pg.get("TENSORCACHE_PG_USER"));
    o.put("tensorcache.persistence.postgres.password", pg.get("TENSORCACHE_PG_PASSWORD"));
    o.putAll(transport);
    NodeLauncher.Node node =
        NodeLauncher.start(
            NodeLauncher.config(List.of("cluster", "postgres"), o, dataDir), List.of(cache));
    try {
      NodeLauncher.whenUp(node.system()).toCompletableFuture().get(90, TimeUnit.SECONDS);
    } catch (Exception e) {
      NodeLauncher.stop(node.system());
      throw new IllegalStateException("client member not Up within 90 s", e);
    }
    return new ClientMember(node, cache.cacheId());
  }

  /** The coordinator's status of the cache, or null if it does not answer within {@code within}. */
  CacheStatus status(Duration within) {
    try {
      Coordinator.Status s =
          AskPattern.<Coordinator.Command, Coordinator.Status>ask(
                  node.coordinator(), Coordinator.GetStatus::new, within, node.system().scheduler())
              .toCompletableFuture()
              .get(within.toMillis() + 500, TimeUnit.MILLISECONDS);
      for (CacheStatus c : s.caches()) {
        if (c.cacheId().equals(cacheId)) {
          return c;
        }
      }
      return null;
    } catch (Exception e) {
      return null;
    }
  }

  /** Asks the coordinator to fill the cache; true once it acknowledged. */
  boolean startFill(Duration within) {
    try {
      AskPattern
          .<Coordinator.Command, org.apache.pekko.pattern.StatusReply<org.apache.pekko.Done>>ask(
              node.coordinator(),
              r -> new Coordinator.StartFill(cacheId, r),
              within,
              node.system().scheduler())
          .toCompletableFuture()
          .get(within.toMillis() + 500, TimeUnit.MILLISECONDS)
          .getValue();
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  /** The actor system of this member (for reading the journal). */
  org.apache.pekko.actor.typed.ActorSystem<?> system() {
    return node.system();
  }

  /** The values of {@code indices} (throws when the lookup fails). */
  Batch lookup(long[] indices) {
    return client.lookup(cacheId, indices);
  }

  /** Ports of the Up members other than this one, oldest first. */
  List<Integer> upPortsOldestFirst() {
    Cluster cluster = Cluster.get(node.system());
    List<Member> up = new ArrayList<>();
    for (Member m : cluster.state().getMembers()) {
      if (m.status() == MemberStatus.up() && !m.equals(cluster.selfMember())) {
        up.add(m);
      }
    }
    up.sort((a, b) -> a.isOlderThan(b) ? -1 : b.isOlderThan(a) ? 1 : 0);
    return up.stream().map(m -> (Integer) m.address().port().get()).toList();
  }

  /** Whether some member is unreachable from here. */
  boolean anyUnreachable() {
    return !Cluster.get(node.system()).state().getUnreachable().isEmpty();
  }

  /** Leaves the cluster and stops this member (bounded). */
  @Override
  public void close() {
    try {
      org.apache.pekko.actor.CoordinatedShutdown.get(node.system())
          .runAll(org.apache.pekko.actor.CoordinatedShutdown.clusterLeavingReason())
          .toCompletableFuture()
          .get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      // stopped below anyway
    }
    NodeLauncher.stop(node.system());
  }
}
