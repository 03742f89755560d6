package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;

/** Nodes leaving and joining during a fill, and a cold restart of the whole cluster. */
class ClusterFaultTest {
  @TempDir Path dir;

  private static long[] all(TestCache cache) {
    long[] all = new long[(int) cache.spec.n()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    return all;
  }

  private static void assertServesReference(TestCluster cluster, TestCache cache, float[][] ref) {
    for (ActorTestKit node : cluster.nodes) {
      Batch batch =
          ClusterFillTest.awaitBatch(
              node, TensorCacheClient.create(node.system()), cache.cacheId(), all(cache));
      assertArrayEquals(ref[0], batch.field("chosen_logp"));
      assertArrayEquals(ref[1], batch.field("rejected_logp"));
    }
  }

  @Test
  void aNodeLeavingAndANodeJoiningMidFillEndCompleteAndIdentical() throws Exception {
    TestCache cache = new TestCache(dir, 1280, 128);
    float[][] reference = cache.reference();
    cache.extraNanosPerBatch = 300_000_000L;
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache.definition()))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.add("\"compute\", \"lookup\"");
      ActorTestKit leaving = cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      ClusterFillTest.startFill(cluster, cache);
      awaitPresentAtLeast(cluster, cache, 100);
      assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
      cluster.leave(leaving);
      assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));
      assertServesReference(cluster, cache, reference);
    }
  }

  @Test
  void lookupsBeforeAndDuringTheFillAreComputedOnDemandAndCorrect() throws Exception {
    TestCache cache = new TestCache(dir, 1280, 128);
    float[][] reference = cache.reference();
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache.definition()))) {
      cluster.add("\"compute\", \"lookup\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      TensorCacheClient client = TensorCacheClient.create(trainer.system());

      // no fill asked for: only the aligned micro-batches of the asked indices are computed
      long[] asked = {1279, 5, 640, 333, 6};
      Batch batch = client.lookup(cache.cacheId(), asked);
      for (int i = 0; i < asked.length; i++) {
        assertEquals(reference[0][(int) asked[i]], batch.field("chosen_logp")[i]);
        assertEquals(reference[1][(int) asked[i]], batch.field("rejected_logp")[i]);
      }
      assertEquals(4 * TestCache.MICRO_BATCH, cache.computedExamples.get());

      // during a slow fill, lookups of ranges not reached yet are answered first
      cache.extraNanosPerBatch = 100_000_000L;
      ClusterFillTest.startFill(cluster, cache);
      long[] later = {1200, 1100, 1000};
      Batch during = client.lookup(cache.cacheId(), later);
      assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
      for (int i = 0; i < later.length; i++) {
        assertEquals(reference[0][(int) later[i]], during.field("chosen_logp")[i]);
      }
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));
      assertServesReference(cluster, cache, reference);
    }
  }

  @Test
  void coldRestartRestoresPersistedRangesAndRecomputesOnlyACorruptOne() throws Exception {
    TestCache cache = new TestCache(dir, 640, 128);
    float[][] reference = cache.reference();
    Path nodeDir = dir.resolve("node");
    try (TestCluster cluster = new TestCluster(nodeDir, List.of(cache.definition()))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      ClusterFillTest.startFill(cluster, cache);
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
    }
    assertEquals(640, cache.computedExamples.getAndSet(0));
    Path segment = dir.resolve("segments/range-000002.safetensors");
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.truncate(Files.size(segment) / 2);
    }

    try (TestCluster cluster = new TestCluster(nodeDir, List.of(cache.definition()))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
      assertServesReference(cluster, cache, reference);
      assertEquals(128, cache.computedExamples.get(), "only the corrupt range is computed again");
    }
  }

  private static void awaitPresentAtLeast(TestCluster cluster, TestCache cache, long present) {
    cluster
        .nodes
        .get(0)
        .createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(100),
            () -> {
              long now = ClusterFillTest.status(cluster, cache).present();
              assertTrue(now >= present, now + " present");
              return null;
            });
  }
}
