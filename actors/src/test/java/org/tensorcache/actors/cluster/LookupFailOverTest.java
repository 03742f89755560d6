package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A lookup whose range is being computed on a node that dies: the request that node held is lost
 * with it, and the lookup asks the range's new home instead of timing out.
 */
class LookupFailOverTest {
  @TempDir Path dir;

  @Test
  void aLookupIsAnsweredByTheRangesNewHomeWhenItsNodeDiesMidComputation() throws Exception {
    TestCache cache = new TestCache(dir, 256, 128);
    float[][] reference = cache.reference();
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache.definition()))) {
      try {
        ActorTestKit trainer = cluster.add("\"lookup\"");
        ActorTestKit first = cluster.add("\"compute\"");
        ActorTestKit second = cluster.add("\"compute\"");
        cluster.awaitUp(Duration.ofSeconds(30));
        cache.gate.close();
        long[] asked = {5, 6};
        CompletableFuture<Batch> answer =
            TensorCacheClient.create(trainer.system())
                .lookupAsync(cache.cacheId(), asked)
                .toCompletableFuture();
        cache.gate.awaitHeld(1, Duration.ofSeconds(30)); // the range's shard computes it now

        // its node is downed as a crashed one would be; what it was asked for goes with it
        ActorTestKit host = hostOf(RangeId.of(cache.cacheId(), 0), first, second);
        ActorTestKit survivor = host == first ? second : first;
        Cluster.get(survivor.system()).manager().tell(new Down(address(host)));
        awaitRemoved(trainer, host);
        cache.gate.open(); // the new home computes; the dead node's held pass ends unanswered

        Batch batch = answer.get(30, TimeUnit.SECONDS);
        for (int i = 0; i < asked.length; i++) {
          assertEquals(reference[0][(int) asked[i]], batch.floats("chosen_logp")[i]);
          assertEquals(reference[1][(int) asked[i]], batch.floats("rejected_logp")[i]);
        }
      } finally {
        cache.gate.open();
      }
    }
  }

  /** The node whose shard region runs the entity of {@code range}. */
  private static ActorTestKit hostOf(RangeId range, ActorTestKit... nodes) {
    for (ActorTestKit node : nodes) {
      TestProbe<ShardRegion.CurrentShardRegionState> probe = node.createTestProbe();
      ClusterSharding.get(node.system())
          .shardState()
          .tell(new GetShardRegionState(ShardActor.ENTITY_KEY, probe.ref()));
      for (ShardRegion.ShardState shard : probe.receiveMessage().getShards()) {
        if (shard.getEntityIds().contains(range.toString())) {
          return node;
        }
      }
    }
    throw new AssertionError("no node runs " + range);
  }

  private static org.apache.pekko.actor.Address address(ActorTestKit node) {
    return Cluster.get(node.system()).selfMember().address();
  }

  private static void awaitRemoved(ActorTestKit observer, ActorTestKit gone) {
    observer
        .createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(30),
            Duration.ofMillis(100),
            () -> {
              for (var m : Cluster.get(observer.system()).state().getMembers()) {
                if (m.address().equals(address(gone)) && m.status() != MemberStatus.removed()) {
                  throw new AssertionError(gone + " still a member: " + m.status());
                }
              }
              return null;
            });
  }
}
