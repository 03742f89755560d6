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
import org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.store.spec.CacheSpec;

/**
 * A journal write that fails (as when a downed node's old singleton wrote the same sequence number
 * first) restarts the coordinator, which recovers from the journal and goes on: it never stays
 * stopped, which would leave the cluster without a coordinator for good.
 */
class CoordinatorRestartTest {
  @TempDir Path dir;
  private ActorTestKit kit;

  @Test
  void aFailedJournalWriteRestartsTheCoordinatorAndTheFillCompletes() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), 64, 32);
    CacheDefinition definition = cache.definition();
    kit =
        ActorTestKit.create(
            "CoordinatorRestartTest",
            PersistenceTestKitPlugin.getInstance()
                .config()
                .withFallback(PersistenceTestKitSnapshotPlugin.config())
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    PersistenceTestKit journal = PersistenceTestKit.create(kit.system());
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(definition);
    ActorRef<Coordinator.Command> coordinator = TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));

    journal.failNextPersisted("tensorcache-coordinator"); // the fill's first event fails
    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    acks.awaitAssert(
        Duration.ofSeconds(30),
        Duration.ofMillis(500),
        () -> {
          coordinator.tell(new Coordinator.StartFill(definition.cacheId(), acks.ref()));
          assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(2)));
          return null;
        });
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    statuses.awaitAssert(
        Duration.ofSeconds(60),
        Duration.ofMillis(300),
        () -> {
          coordinator.tell(new Coordinator.GetStatus(statuses.ref()));
          Coordinator.CacheStatus s = statuses.receiveMessage(Duration.ofSeconds(3)).caches()[0];
          assertEquals(s.ranges(), s.persistedRanges(), s.toString());
          return null;
        });
    CacheSpec spec = definition.spec();
    long[] all = new long[(int) spec.n()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    float[][] reference = cache.reference();
    var batch = TensorCacheClient.create(kit.system()).lookup(definition.cacheId(), all);
    assertArrayEquals(reference[0], batch.field("chosen_logp"));
    assertArrayEquals(reference[1], batch.field("rejected_logp"));
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
