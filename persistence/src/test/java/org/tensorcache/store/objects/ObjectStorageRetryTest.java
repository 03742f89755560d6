package org.tensorcache.store.objects;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectSegmentStore.Created;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.testing.S3ProxyServer;

/** Writes while the S3Proxy server is down: tried again until it is back, or a clear error. */
class ObjectStorageRetryTest {
  private static final String BUCKET = "segments";
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir static Path serverDir;
  private static S3ProxyServer server;

  @TempDir Path dir;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3ProxyServer.start(serverDir);
    S3ProxyServer.useAsDefaultCredentials();
    try (ObjectStorage storage = open(Duration.ofSeconds(10))) {
      storage.client().createBucket(b -> b.bucket(BUCKET));
    }
  }

  @AfterAll
  static void stopServer() throws Exception {
    server.close();
  }

  @BeforeEach
  void serverRuns() throws Exception {
    server.start();
  }

  private static ObjectStorage open(Duration window) {
    return ObjectStorage.open(
        ObjectStoreSettings.defaults()
            .withEndpoint(server.endpoint())
            .withRetry(window, Duration.ofMillis(50), Duration.ofMillis(500)));
  }

  private ObjectSegmentStore store(ObjectStorage storage, String prefix, String node)
      throws IOException {
    return storage.segments(
        ObjectLocation.parse("s3://" + BUCKET + "/" + prefix), dir.resolve(node), SPEC, FP);
  }

  @Test
  void writeDuringAnOutageIsTriedAgainUntilTheServerIsBack() throws Exception {
    Block block = Fixtures.block(SPEC, 2, 7, 100);
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try (ObjectStorage storage = open(Duration.ofMinutes(3))) {
      ObjectSegmentStore<Block> store = store(storage, "outage", "a");
      server.stop();
      Future<Created> write = writer.submit(() -> store.create(block));
      awaitFailedAttempts(storage, 3);
      assertTrue(!write.isDone(), "the write waits for the server");
      server.start();
      assertEquals(Created.CREATED, write.get(3, TimeUnit.MINUTES));
      assertEquals(Optional.of(block), store(storage, "outage", "b").read(2));
    } finally {
      writer.shutdownNow();
    }
  }

  @Test
  void outageLongerThanTheWindowIsAClearErrorAndStoresNothing() throws Exception {
    try (ObjectStorage storage = open(Duration.ofSeconds(1))) {
      ObjectSegmentStore<Block> store = store(storage, "too-long", "a");
      server.stop();
      ObjectStorageUnavailableException write =
          assertThrows(
              ObjectStorageUnavailableException.class,
              () -> store.write(Fixtures.block(SPEC, 1, 8, 100)));
      assertTrue(write.attempts() > 1, "tried " + write.attempts() + " times");
      String message = write.getMessage();
      assertTrue(message.startsWith("create of " + store.locationOf(1) + " failed"), message);
      assertTrue(message.contains(server.endpoint().toString()), message);
      assertTrue(message.contains("retry window PT1S"), message);
      // an unreachable store is an error, never an empty one
      assertThrows(ObjectStorageUnavailableException.class, () -> store.read(1));
      assertThrows(ObjectStorageUnavailableException.class, () -> store.persistedRanges());

      server.start();
      assertEquals(Set.of(), store.persistedRanges());
      assertEquals(Optional.empty(), store.read(1));
    }
  }

  /** Waits (bounded) until {@code storage} has seen {@code n} failed tries. */
  private static void awaitFailedAttempts(ObjectStorage storage, long n)
      throws InterruptedException {
    long limit = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (storage.failedAttempts() < n) {
      if (System.nanoTime() > limit) {
        throw new AssertionError(
            "only " + storage.failedAttempts() + " failed tries, expected " + n);
      }
      Thread.sleep(20);
    }
  }
}
