package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.sharding.ShardRegion.CurrentShardRegionState;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ByReference;
import org.tensorcache.actors.cache.ReplicaView;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/** Ranges too large to gossip: presence by gossip, values point to point and from segments. */
class ByReferenceTest {
  private static final String SMALL_BUDGET = "tensorcache.replication.gossip-budget = 4 KiB";

  @TempDir Path dir;

  @Test
  void largeRangesAreServedPointToPointAndRestoredFromSegments() throws Exception {
    TestCache cache = new TestCache(dir, 640, 128, true);
    float[][] reference = cache.reference();
    long[] all = new long[640];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    Path nodeDir = dir.resolve("node");
    try (TestCluster cluster =
        new TestCluster(nodeDir, List.of(cache.definition()), SMALL_BUDGET)) {
      cluster.add("\"compute\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      assertTrue(
          TensorCacheNode.get(trainer.system()).replication(cache.cacheId())
              instanceof ByReference);
      ClusterFillTest.startFill(cluster, cache);
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
      // a shard of a range replicated by reference holds the only copy of its values: it stays
      // (a range replicated by value stops once complete: ClusterFillTest.awaitNoShards)
      assertEquals(5, shardEntities(cluster.nodes.get(0)), "every range's shard still runs");
      trainer
          .createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(10),
              () -> {
                assertEquals(640, ClusterFillTest.status(cluster, cache).present());
                return null;
              });

      // before any lookup: what the hot tier holds comes in on use, never by gossip
      for (ActorTestKit node : cluster.nodes) {
        assertNull(
            new ReplicaView(TensorCacheNode.get(node.system()).registry())
                .block(cache.cacheId(), 0),
            "values of a range over the gossip budget must not be gossiped");
      }
      TensorCacheClient client = TensorCacheClient.create(trainer.system());
      Batch batch = ClusterFillTest.awaitBatch(trainer, client, cache.cacheId(), all);
      assertArrayEquals(reference[0], batch.floats("chosen_hidden_mean"));
      assertEquals(5, shardEntities(cluster.nodes.get(0)), "the shards stay after the lookups");
    }
    assertEquals(640, cache.computedExamples.getAndSet(0));

    try (TestCluster cluster =
        new TestCluster(nodeDir, List.of(cache.definition()), SMALL_BUDGET)) {
      cluster.add("\"compute\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
      TensorCacheClient client = TensorCacheClient.create(trainer.system());
      Batch batch = ClusterFillTest.awaitBatch(trainer, client, cache.cacheId(), all);
      assertArrayEquals(reference[0], batch.floats("chosen_hidden_mean"));
      assertEquals(0, cache.computedExamples.get(), "served from the segments, nothing recomputed");
    }
  }

  /**
   * One coordinator following a gossiped cache and a cache by reference at once: the replicator's
   * changes of both kinds reach it, each as what it is, and both fills complete.
   */
  @Test
  void aGossipedCacheAndOneByReferenceFillSideBySide() throws Exception {
    TestCache gossiped = new TestCache(dir.resolve("logp"), 128, 32);
    TestCache large = new TestCache(dir.resolve("vectors"), 256, 128, true);
    try (TestCluster cluster =
        new TestCluster(
            dir.resolve("node"),
            List.of(gossiped.definition(), large.definition()),
            SMALL_BUDGET)) {
      ActorTestKit compute = cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      TensorCacheNode node = TensorCacheNode.get(compute.system());
      assertFalse(node.replication(gossiped.cacheId()) instanceof ByReference);
      assertTrue(node.replication(large.cacheId()) instanceof ByReference);
      for (TestCache cache : List.of(gossiped, large)) {
        ClusterFillTest.startFill(cluster, cache);
      }
      for (TestCache cache : List.of(gossiped, large)) {
        ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
        long[] all = new long[(int) cache.spec.n()];
        for (int i = 0; i < all.length; i++) {
          all[i] = i;
        }
        TensorCacheClient client = TensorCacheClient.create(compute.system());
        Batch batch = ClusterFillTest.awaitBatch(compute, client, cache.cacheId(), all);
        String field = cache == large ? "chosen_hidden_mean" : "chosen_logp";
        assertArrayEquals(cache.reference()[0], batch.floats(field), cache.cacheId());
      }
    }
  }

  /** How many shard entities {@code node} hosts. */
  private static long shardEntities(ActorTestKit node) {
    TestProbe<CurrentShardRegionState> probe = node.createTestProbe();
    ClusterSharding.get(node.system())
        .shardState()
        .tell(new GetShardRegionState(ShardActor.ENTITY_KEY, probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(5)).getShards().stream()
        .mapToLong(s -> s.getEntityIds().size())
        .sum();
  }
}
