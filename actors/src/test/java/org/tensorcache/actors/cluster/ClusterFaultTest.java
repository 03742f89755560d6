package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ReplicaView;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.store.block.Block;

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
      assertArrayEquals(ref[0], batch.floats("chosen_logp"));
      assertArrayEquals(ref[1], batch.floats("rejected_logp"));
    }
  }

  @Test
  void aNodeLeavingAndANodeJoiningMidFillEndCompleteAndIdentical() throws Exception {
    TestCache cache = new TestCache(dir, 1280, 128);
    float[][] reference = cache.reference();
    // the fill computes 24 of its 80 micro-batches, then waits at the gate until it opens
    int allowed = 24;
    cache.gate.close();
    cache.gate.allow(allowed);
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache.definition()))) {
      try {
        cluster.add("\"compute\", \"lookup\"");
        cluster.add("\"compute\", \"lookup\"");
        ActorTestKit leaving = cluster.add("\"compute\", \"lookup\"");
        cluster.awaitUp(Duration.ofSeconds(30));
        ClusterFillTest.startFill(cluster, cache);
        cache.gate.awaitPassed(allowed, Duration.ofSeconds(60));
        cache.gate.awaitHeld(1, Duration.ofSeconds(60)); // the rest of the fill waits
        long computed = (long) allowed * TestCache.MICRO_BATCH;
        awaitPresentAtLeast(cluster, cache, computed);
        assertEquals(computed, ClusterFillTest.status(cluster, cache).present(), "held there");
        assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
        cluster.leave(leaving);
        assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
        cluster.add("\"compute\", \"lookup\"");
        cluster.awaitUp(Duration.ofSeconds(30));
        cache.gate.open();
        ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));
        assertServesReference(cluster, cache, reference);
      } finally {
        cache.gate.open(); // a failed test must not leave passes held while its nodes stop
      }
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
        assertEquals(reference[0][(int) asked[i]], batch.floats("chosen_logp")[i]);
        assertEquals(reference[1][(int) asked[i]], batch.floats("rejected_logp")[i]);
      }
      assertEquals(4 * TestCache.MICRO_BATCH, cache.computedExamples.get());

      // the fill starts but is held at the gate; a lookup of the last micro-batch of three
      // ranges, then one pass at a time until it is answered: the shards compute asked
      // micro-batches ahead of their fill order, so it is answered while its ranges, and the
      // fill, are incomplete
      cache.gate.close();
      try {
        ClusterFillTest.startFill(cluster, cache);
        cache.gate.awaitHeld(1, Duration.ofSeconds(30));
        long[] later = {1151, 1023, 895};
        CompletableFuture<Batch> answered =
            client.lookupAsync(cache.cacheId(), later).toCompletableFuture();
        long fillBatches = (cache.spec.n() - 4 * TestCache.MICRO_BATCH) / TestCache.MICRO_BATCH;
        long start = cache.gate.passed();
        for (int allowed = 1; !answered.isDone(); allowed++) {
          assertTrue(allowed <= fillBatches, "the lookup is answered before the fill ends");
          cache.gate.allow(1);
          long passes = start + allowed;
          trainer
              .createTestProbe()
              .awaitAssert(
                  Duration.ofSeconds(30),
                  Duration.ofMillis(20),
                  () -> {
                    boolean next = cache.gate.passed() >= passes && cache.gate.held() > 0;
                    assertTrue(answered.isDone() || next, "the next pass waits at the gate");
                    return null;
                  });
        }
        Batch during = answered.get();
        assertTrue(ClusterFillTest.status(cluster, cache).present() < cache.spec.n(), "mid-fill");
        for (int i = 0; i < later.length; i++) {
          assertEquals(reference[0][(int) later[i]], during.floats("chosen_logp")[i]);
        }
        assertAskedRangesIncomplete(cluster.nodes.get(0), cache, later);
        cache.gate.open();
        ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));
        assertServesReference(cluster, cache, reference);
      } finally {
        cache.gate.open();
      }
    }
  }

  /**
   * Once the compute node's replica holds everything computed so far (nothing more is, the gate is
   * closed), no asked index's range is complete: its last micro-batch was not computed last.
   */
  private static void assertAskedRangesIncomplete(
      ActorTestKit node, TestCache cache, long[] asked) {
    ReplicaView view = new ReplicaView(TensorCacheNode.get(node.system()).registry());
    node.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            Duration.ofMillis(100),
            () -> {
              long present = 0;
              for (int r = 0; r < cache.spec.rangeCount(); r++) {
                Block block = view.block(cache.cacheId(), r);
                present += block == null ? 0 : block.presentCount();
              }
              assertEquals(cache.computedExamples.get(), present, "replica caught up");
              return null;
            });
    for (long index : asked) {
      int range = cache.spec.rangeOf(index);
      Block block = view.block(cache.cacheId(), range);
      assertTrue(block.isPresent(index), index + " present");
      assertFalse(block.isComplete(), "range " + range + " complete: " + index + " came last");
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
