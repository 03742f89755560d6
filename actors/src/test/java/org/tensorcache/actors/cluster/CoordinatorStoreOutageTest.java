package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.PersistenceTestKitPlugin;
import org.apache.pekko.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.store.objects.ObjectLocation;
import org.tensorcache.store.objects.ObjectStorage;
import org.tensorcache.store.objects.ObjectStoreSettings;
import org.tensorcache.store.objects.S3ProxyServer;

/**
 * A coordinator that starts while the object store is down cannot list the segments there: it must
 * restart and list again until the store is back, then restore every range and compute none. A
 * coordinator that stopped instead would leave the cluster without one for good. The store is a
 * real S3Proxy server, stopped and started again.
 */
class CoordinatorStoreOutageTest {
  private static final String BUCKET = "cache";

  @TempDir Path dir;
  private ActorTestKit kit;
  private S3ProxyServer server;
  private ObjectStorage storage;

  @Test
  void aCoordinatorStartedDuringAnOutageRestoresEveryRangeOnceTheStoreIsBack() throws Exception {
    assumeTrue(
        S3ProxyServer.findJar().isPresent(), "the S3Proxy jar is not in the local repository");
    server = S3ProxyServer.start(dir.resolve("s3"));
    S3ProxyServer.useAsDefaultCredentials();
    server.createBucket(BUCKET);
    storage =
        ObjectStorage.open(
            ObjectStoreSettings.defaults()
                .withEndpoint(server.endpoint())
                .withRetry(Duration.ofSeconds(2), Duration.ofMillis(50), Duration.ofMillis(500)));
    TestCache cache = new TestCache(dir.resolve("cache"), 128, 32);

    startKit("first");
    ActorRef<Coordinator.Command> first = node(definition("first", cache));
    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    first.tell(new Coordinator.StartFill(cache.cacheId(), acks.ref()));
    assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(30)));
    awaitPersisted(first, Duration.ofSeconds(60));
    kit.shutdownTestKit();

    server.stop();
    cache.computedExamples.set(0);
    // a new cluster on an empty disk and an empty journal: only the bucket knows the ranges
    startKit("second");
    CacheDefinition fresh = definition("second", cache);
    ActorRef<Coordinator.Command> second =
        LoggingTestKit.error("segments of " + cache.cacheId() + " cannot be listed")
            .expect(kit.system(), () -> node(fresh));
    server.start(); // the coordinator restarted meanwhile; a stopped one would answer no more
    awaitPersisted(second, Duration.ofSeconds(60));
    assertEquals(0, cache.computedExamples.get(), "examples computed again");
    long[] all = new long[(int) cache.spec.n()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    float[][] reference = cache.reference();
    var batch = TensorCacheClient.create(kit.system()).lookup(cache.cacheId(), all);
    assertArrayEquals(reference[0], batch.floats("chosen_logp"));
    assertArrayEquals(reference[1], batch.floats("rejected_logp"));
  }

  private void startKit(String name) {
    kit =
        ActorTestKit.create(
            "CoordinatorStoreOutageTest",
            PersistenceTestKitPlugin.getInstance()
                .config()
                .withFallback(PersistenceTestKitSnapshotPlugin.config())
                .withFallback(
                    TestCluster.config(dir.resolve("node-" + name), "\"compute\", \"lookup\"")));
  }

  /** The cache with its segments in the bucket and its local copies in a directory of its own. */
  private CacheDefinition definition(String name, TestCache cache) throws IOException {
    Path local = dir.resolve("local-" + name);
    return cache
        .definition()
        .withSegments(
            storage.segments(
                ObjectLocation.parse("s3://" + BUCKET + "/segments"),
                local,
                cache.spec,
                cache.fingerprint),
            local);
  }

  /** Starts the node of {@link #kit}. */
  private ActorRef<Coordinator.Command> node(CacheDefinition definition) {
    TensorCacheNode.get(kit.system()).register(definition);
    ActorRef<Coordinator.Command> coordinator = TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    return coordinator;
  }

  private void awaitPersisted(ActorRef<Coordinator.Command> coordinator, Duration within) {
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

  @AfterEach
  void stop() throws InterruptedException {
    if (kit != null) {
      kit.shutdownTestKit();
    }
    if (storage != null) {
      storage.close();
    }
    if (server != null) {
      server.close();
    }
  }
}
