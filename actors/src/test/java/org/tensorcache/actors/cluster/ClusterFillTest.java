package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.sharding.ShardRegion.CurrentShardRegionState;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

class ClusterFillTest {
  @TempDir Path dir;

  @Test
  void threeNodesFillBitIdenticalToOneProcessAndServeEveryNode() throws Exception {
    TestCache cache = new TestCache(dir, 600, 128);
    float[][] reference = cache.reference();
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache.definition()))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.add("\"compute\", \"lookup\"");
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      startFill(cluster, cache);
      awaitPersisted(cluster, cache, Duration.ofSeconds(60));
      awaitNoShards(cluster); // complete ranges live in the replicas: their shards stopped

      long[] all = new long[(int) cache.spec.n()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      for (ActorTestKit node : cluster.nodes) {
        TensorCacheClient client = TensorCacheClient.create(node.system());
        Batch batch = awaitBatch(node, client, cache.cacheId(), all);
        assertArrayEquals(reference[0], batch.floats("chosen_logp"));
        assertArrayEquals(reference[1], batch.floats("rejected_logp"));
      }
      assertEquals(600, cache.computedExamples.get(), "every example computed exactly once");

      // a trainer's session through the client, as a DJL data set: indices of the seeded
      // sampler, labels the cached values of those indices
      ActorTestKit trainer = cluster.nodes.get(2);
      TensorCacheClient client = TensorCacheClient.create(trainer.system());
      var session = client.session(cache.cacheId(), "run-1", 1, 2, 9L, 16);
      var sampler = org.tensorcache.actors.session.Sampler.of(600, 9L, 16, 2);
      var dataset = new org.tensorcache.actors.client.CachedDataset(session, 3);
      try (var manager = ai.djl.ndarray.NDManager.newBaseManager()) {
        long step = 0;
        for (ai.djl.training.dataset.Batch b : dataset.getData(manager)) {
          long[] indices = b.getData().head().toLongArray();
          assertArrayEquals(sampler.indices(step, 1), indices);
          float[] chosen = b.getLabels().get(0).toFloatArray();
          for (int i = 0; i < indices.length; i++) {
            assertEquals(reference[0][(int) indices[i]], chosen[i]);
          }
          b.close();
          step++;
        }
        assertEquals(3, step);
      }
    }
  }

  /** Waits until no node hosts a shard entity, which frees the shards' copies of the values. */
  static void awaitNoShards(TestCluster cluster) {
    for (ActorTestKit node : cluster.nodes) {
      TestProbe<CurrentShardRegionState> probe = node.createTestProbe();
      probe.awaitAssert(
          Duration.ofSeconds(20),
          Duration.ofMillis(200),
          () -> {
            ClusterSharding.get(node.system())
                .shardState()
                .tell(new GetShardRegionState(ShardActor.ENTITY_KEY, probe.ref()));
            CurrentShardRegionState state = probe.receiveMessage(Duration.ofSeconds(5));
            long entities =
                state.getShards().stream().mapToLong(s -> s.getEntityIds().size()).sum();
            assertEquals(0, entities, "shard entities still running: " + state.getShards());
            return null;
          });
    }
  }

  static void startFill(TestCluster cluster, TestCache cache) {
    ActorTestKit first = cluster.nodes.get(0);
    TestProbe<StatusReply<org.apache.pekko.Done>> probe = first.createTestProbe();
    probe.awaitAssert(
        Duration.ofSeconds(20),
        () -> {
          cluster.coordinators.get(0).tell(new Coordinator.StartFill(cache.cacheId(), probe.ref()));
          assertEquals(StatusReply.ack(), probe.receiveMessage(Duration.ofSeconds(3)));
          return null;
        });
  }

  static CacheStatus status(TestCluster cluster, TestCache cache) {
    ActorTestKit first = cluster.nodes.get(0);
    TestProbe<Coordinator.Status> probe = first.createTestProbe();
    cluster.coordinators.get(0).tell(new Coordinator.GetStatus(probe.ref()));
    for (CacheStatus s : probe.receiveMessage(Duration.ofSeconds(10)).caches()) {
      if (s.cacheId().equals(cache.cacheId())) {
        return s;
      }
    }
    throw new AssertionError("no status of " + cache.cacheId());
  }

  static void awaitPersisted(TestCluster cluster, TestCache cache, Duration within) {
    cluster
        .nodes
        .get(0)
        .createTestProbe()
        .awaitAssert(
            within,
            Duration.ofMillis(500),
            () -> {
              CacheStatus s = status(cluster, cache);
              assertEquals(s.ranges(), s.persistedRanges(), s.toString());
              return null;
            });
  }

  static Batch awaitBatch(ActorTestKit node, TensorCacheClient client, String cacheId, long[] idx) {
    return node.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20), Duration.ofMillis(200), () -> client.lookup(cacheId, idx));
  }
}
