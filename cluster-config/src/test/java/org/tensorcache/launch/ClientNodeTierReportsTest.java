package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.store.tier.Tier;

/**
 * A client that just joined finds the node's lookup actor through the receptionist and gets its hot
 * tier, as {@code status} prints it.
 */
class ClientNodeTierReportsTest {
  @TempDir Path dir;
  private NodeLauncher.Node node;

  @Test
  void aJoinedClientGetsTheHotTierOfEveryNode() throws Exception {
    SmallCache cache = new SmallCache(dir.resolve("cache"), 128, 64);
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides("127.0.0.1", 0, List.of(), List.of("lookup")));
    overrides.put("pekko.cluster.seed-nodes", List.of());
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.put("pekko.loglevel", "WARNING");
    // two fields of 64 floats a range: over this budget, so replicated by reference and tiered
    overrides.put("tensorcache.replication.gossip-budget", "256 B");
    node =
        NodeLauncher.start(
            NodeLauncher.config(List.of("cluster", "h2"), overrides, dir.resolve("node")),
            List.of(cache.definition()));
    Address address = Cluster.get(node.system()).selfMember().address();
    Cluster.get(node.system()).manager().tell(Join.create(address));
    NodeLauncher.whenUp(node.system()).toCompletableFuture().get(30, TimeUnit.SECONDS);
    String id = cache.fingerprint.cacheId();
    TensorCacheNode.get(node.system()).hotTier().stats(id).hit(Tier.WARM, 7);

    HostPort seed = new HostPort("127.0.0.1", address.getPort().get());
    try (ClientNode client =
        ClientNode.join(
            "127.0.0.1",
            List.of("cluster", "h2"),
            List.of(seed),
            dir.resolve("client"),
            Duration.ofSeconds(30))) {
      List<TierReporter.TierReport> reports = client.tierReports(Duration.ofSeconds(20));
      assertEquals(1, reports.size(), "the client itself runs no lookup actor");
      TierReporter.TierReport report = reports.get(0);
      assertEquals(address.toString(), report.node());
      assertTrue(report.budgetBytes() > 0);
      assertEquals(1, report.caches().length);
      assertEquals(id, report.caches()[0].cacheId());
      assertEquals(7, report.caches()[0].stats().hits(Tier.WARM));
    }
  }

  @AfterEach
  void stop() {
    if (node != null) {
      NodeLauncher.stop(node.system());
    }
  }
}
