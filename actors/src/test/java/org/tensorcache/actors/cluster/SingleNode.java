package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.PersistenceTestKitPlugin;
import org.apache.pekko.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A one-node cluster (roles compute and lookup) whose journal is Pekko's persistence test kit, so
 * that a test can make journal operations fail; and what coordinator tests do with it.
 */
final class SingleNode {
  private SingleNode() {}

  /** A test kit named {@code name} whose node keeps its files under {@code nodeDir}. */
  static ActorTestKit kit(String name, Path nodeDir) {
    return ActorTestKit.create(
        name,
        PersistenceTestKitPlugin.getInstance()
            .config()
            .withFallback(PersistenceTestKitSnapshotPlugin.config())
            .withFallback(TestCluster.config(nodeDir, "\"compute\", \"lookup\"")));
  }

  /** Registers {@code definition}, starts TensorCache and joins the node to itself. */
  static ActorRef<Coordinator.Command> start(ActorTestKit kit, CacheDefinition definition) {
    TensorCacheNode.get(kit.system()).register(definition);
    ActorRef<Coordinator.Command> coordinator = TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    return coordinator;
  }

  /** Asks for a fill of {@code cacheId} until the coordinator acknowledges it (30 s at most). */
  static void startFill(
      ActorTestKit kit, ActorRef<Coordinator.Command> coordinator, String cacheId) {
    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    acks.awaitAssert(
        Duration.ofSeconds(30),
        Duration.ofMillis(500),
        () -> {
          coordinator.tell(new Coordinator.StartFill(cacheId, acks.ref()));
          assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(2)));
          return null;
        });
  }

  /** Waits until the coordinator counts every range of its first cache as persisted. */
  static void awaitPersisted(
      ActorTestKit kit, ActorRef<Coordinator.Command> coordinator, Duration within) {
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    statuses.awaitAssert(
        within,
        Duration.ofMillis(300),
        () -> {
          coordinator.tell(new Coordinator.GetStatus(statuses.ref()));
          CacheStatus s = statuses.receiveMessage(Duration.ofSeconds(3)).caches()[0];
          assertEquals(s.ranges(), s.persistedRanges(), s.toString());
          return null;
        });
  }

  /** Looks every example of the log-prob cache up: bit for bit the single-process values. */
  static void assertAllValues(ActorTestKit kit, TestCache cache) throws Exception {
    long[] all = new long[(int) cache.spec.n()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    float[][] reference = cache.reference();
    var batch = TensorCacheClient.create(kit.system()).lookup(cache.cacheId(), all);
    assertArrayEquals(reference[0], batch.floats("chosen_logp"));
    assertArrayEquals(reference[1], batch.floats("rejected_logp"));
  }
}
