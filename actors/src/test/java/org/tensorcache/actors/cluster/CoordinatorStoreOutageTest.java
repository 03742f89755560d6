package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.store.objects.ObjectLocation;
import org.tensorcache.store.objects.ObjectStorage;
import org.tensorcache.store.objects.ObjectStoreSettings;
import org.tensorcache.testing.S3ProxyServer;

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

    kit = SingleNode.kit("CoordinatorStoreOutageTest", dir.resolve("node-first"));
    ActorRef<Coordinator.Command> first = SingleNode.start(kit, definition("first", cache));
    SingleNode.startFill(kit, first, cache.cacheId());
    SingleNode.awaitPersisted(kit, first, Duration.ofSeconds(60));
    kit.shutdownTestKit();

    server.stop();
    cache.computedExamples.set(0);
    // a new cluster on an empty disk and an empty journal: only the bucket knows the ranges
    kit = SingleNode.kit("CoordinatorStoreOutageTest", dir.resolve("node-second"));
    CacheDefinition fresh = definition("second", cache);
    ActorRef<Coordinator.Command> second =
        LoggingTestKit.error("segments of " + cache.cacheId() + " cannot be listed")
            .expect(kit.system(), () -> SingleNode.start(kit, fresh));
    server.start(); // the coordinator restarted meanwhile; a stopped one would answer no more
    SingleNode.awaitPersisted(kit, second, Duration.ofSeconds(60));
    assertEquals(0, cache.computedExamples.get(), "examples computed again");
    SingleNode.assertAllValues(kit, cache);
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
