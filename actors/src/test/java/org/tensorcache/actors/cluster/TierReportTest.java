package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ByReference;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * Every node's tier reporter, found through the receptionist, reports its own hot tier: its
 * address, budget and policy, and the statistics of the caches replicated by reference only; a
 * report from another node crosses the wire whole.
 */
class TierReportTest {
  @TempDir Path dir;

  @Test
  void eachNodeReportsItsHotTierAndItsTieredCachesOnly() throws Exception {
    TestCache vectors = new TestCache(dir.resolve("vectors"), 128, 64, true);
    TestCache scalars = new TestCache(dir.resolve("scalars"), 128, 64);
    try (TestCluster cluster =
        new TestCluster(
            dir.resolve("node"),
            List.of(vectors.definition(), scalars.definition()),
            "tensorcache.replication.gossip-budget = 2 KiB\ntensorcache.memory.policy = lfu")) {
      ActorTestKit first = cluster.add("\"compute\"");
      ActorTestKit second = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      TensorCacheNode secondNode = TensorCacheNode.get(second.system());
      assertTrue(secondNode.replication(vectors.cacheId()) instanceof ByReference);
      assertFalse(secondNode.replication(scalars.cacheId()) instanceof ByReference);
      TierStats stats = secondNode.hotTier().stats(vectors.cacheId());
      stats.hit(Tier.HOT, 30);
      stats.hit(Tier.COLD, 10);
      stats.recordPrefetchLead(4);

      Map<String, TierReporter.TierReport> reports = new HashMap<>();
      TestProbe<TierReporter.TierReport> replies = first.createTestProbe();
      for (ActorRef<TierReporter.Command> reporter : reporters(first, 2)) {
        reporter.tell(new TierReporter.GetTierStats(replies.ref()));
        TierReporter.TierReport r = replies.receiveMessage(Duration.ofSeconds(10));
        reports.put(r.node(), r);
      }

      String remote = Cluster.get(second.system()).selfMember().address().toString();
      String local = Cluster.get(first.system()).selfMember().address().toString();
      assertEquals(Set.of(local, remote), reports.keySet());
      TierReporter.TierReport report = reports.get(remote);
      assertEquals(secondNode.hotTier().budgetBytes(), report.budgetBytes());
      assertEquals("lfu", report.policy());
      assertEquals(1, report.caches().length, "the gossiped cache has no tiers");
      assertEquals(vectors.cacheId(), report.caches()[0].cacheId());
      TierStats.Snapshot snapshot = report.caches()[0].stats();
      assertEquals(30, snapshot.hits(Tier.HOT));
      assertEquals(10, snapshot.hits(Tier.COLD));
      assertEquals(4.0, snapshot.meanPrefetchLead());
      assertEquals(0, reports.get(local).caches()[0].stats().hits(Tier.HOT));
    }
  }

  /** The tier reporters the receptionist of {@code kit}'s node lists, once there are {@code n}. */
  private static Set<ActorRef<TierReporter.Command>> reporters(ActorTestKit kit, int n) {
    TestProbe<Receptionist.Listing> listings = kit.createTestProbe();
    return listings.awaitAssert(
        Duration.ofSeconds(20),
        Duration.ofMillis(200),
        () -> {
          kit.system()
              .receptionist()
              .tell(Receptionist.find(TierReporter.SERVICE_KEY, listings.ref()));
          Set<ActorRef<TierReporter.Command>> found =
              listings.receiveMessage().getServiceInstances(TierReporter.SERVICE_KEY);
          assertEquals(n, found.size(), "tier reporters listed");
          return found;
        });
  }
}
