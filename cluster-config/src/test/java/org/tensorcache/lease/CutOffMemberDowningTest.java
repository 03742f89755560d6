package org.tensorcache.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.Reachability;
import org.apache.pekko.cluster.UniqueAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three real members with {@link LeaseDowningProvider}, shown the records of a member cut off one
 * way (the pictures the failure detectors would paint): the lowest other member takes the lease and
 * downs that member alone; records two members would each explain down nobody here. The resolver's
 * own stable-after is Pekko's 20 s, so within these tests only this decision can act.
 */
class CutOffMemberDowningTest {
  private static final String LEASE = "tensorcache-downing-test-sbr";
  private final List<ActorSystem> systems = new ArrayList<>();

  @BeforeEach
  void formCluster() throws Exception {
    MemoryLease.HOLDERS.clear();
    int seed = freePort();
    for (int i = 0; i < 3; i++) {
      systems.add(member(i == 0 ? seed : freePort(), seed));
    }
    await("three members Up", () -> systems.stream().allMatch(s -> upCount(s) == 3));
    // in address order: the last is the one cut off, the first the one to decide
    systems.sort(Comparator.comparing(s -> Cluster.get(s).selfMember(), Member.ordering()));
  }

  @AfterEach
  void stop() {
    systems.forEach(ActorSystem::terminate);
  }

  @Test
  void aMemberThatHearsNobodyIsDownedAloneByTheLowestOther() throws Exception {
    UniqueAddress a = self(0);
    UniqueAddress b = self(1);
    UniqueAddress x = self(2);
    Reachability r =
        Reachability.empty()
            .unreachable(x, a)
            .unreachable(x, b)
            .unreachable(a, x)
            .unreachable(b, x);
    await(
        "the cut-off member downed",
        () -> {
          show(r);
          return status(systems.get(0), x) == MemberStatus.down() || !isMember(systems.get(0), x);
        });
    assertEquals(
        a.address().hostPort(),
        MemoryLease.HOLDERS.get(LEASE),
        "the lowest other member decides, under the resolver's lease");
    // given back release-after (1 s here) after the removal, or later decisions would all fail
    await("the cut-off member removed", () -> !isMember(systems.get(0), x));
    await("the lease given back", MemoryLease.HOLDERS::isEmpty);
    for (int i = 0; i < 2; i++) { // by then a second past the removal: the others kept
      assertEquals(MemberStatus.up(), status(systems.get(i), a), "a stays Up");
      assertEquals(MemberStatus.up(), status(systems.get(i), b), "b stays Up");
    }
  }

  @Test
  void recordsThatTwoMembersWouldEachExplainDownNobody() throws Exception {
    UniqueAddress a = self(0);
    UniqueAddress x = self(2);
    Reachability r = Reachability.empty().unreachable(x, a).unreachable(a, x);
    // the test's cut-off-member-after (500 ms) several times over, checked on every poll
    holds(
        Duration.ofMillis(2500),
        () -> {
          show(r);
          for (ActorSystem s : systems) {
            assertEquals(3, upCount(s), "nobody downed");
          }
          assertTrue(MemoryLease.HOLDERS.isEmpty(), "no lease taken: " + MemoryLease.HOLDERS);
        });
  }

  /**
   * Shows {@code r} to the downing of the two members that are not cut off. Shown again on every
   * poll, as failure detectors keep their records: Pekko publishes the cluster's own reachability
   * too, whenever gossip changes it, and that replaces the picture shown.
   */
  private void show(Reachability r) {
    for (ActorSystem s : systems.subList(0, 2)) {
      s.actorSelection("/system/cluster/core/daemon/downingProvider")
          .tell(new ClusterEvent.ReachabilityChanged(r), ActorRef.noSender());
    }
  }

  private UniqueAddress self(int i) {
    return Cluster.get(systems.get(i)).selfUniqueAddress();
  }

  private ActorSystem member(int port, int seed) {
    Map<String, Object> o = new HashMap<>();
    o.put("pekko.actor.provider", "cluster");
    o.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    o.put("pekko.remote.artery.canonical.port", port);
    o.put("pekko.cluster.seed-nodes", List.of("pekko://downing@127.0.0.1:" + seed));
    o.put("pekko.cluster.downing-provider-class", LeaseDowningProvider.class.getName());
    o.put("pekko.cluster.split-brain-resolver.active-strategy", "lease-majority");
    o.put("pekko.cluster.split-brain-resolver.lease-majority.lease-implementation", "test-lease");
    o.put("pekko.cluster.split-brain-resolver.lease-majority.lease-name", LEASE);
    o.put("test-lease.lease-class", MemoryLease.class.getName());
    o.put("tensorcache.downing.cut-off-member-after", "500ms");
    o.put("pekko.cluster.split-brain-resolver.lease-majority.release-after", "1s");
    o.put("pekko.coordinated-shutdown.exit-jvm", "off");
    o.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    Config c =
        ConfigFactory.parseMap(o)
            .withFallback(ConfigFactory.parseString("test-lease = ${pekko.coordination.lease}"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    return ActorSystem.create("downing", c);
  }

  private static MemberStatus status(ActorSystem s, UniqueAddress m) {
    for (Member member : Cluster.get(s).state().getMembers()) {
      if (member.uniqueAddress().equals(m)) {
        return member.status();
      }
    }
    return MemberStatus.removed();
  }

  private static boolean isMember(ActorSystem s, UniqueAddress m) {
    return status(s, m) != MemberStatus.removed();
  }

  private static long upCount(ActorSystem s) {
    long up = 0;
    for (Member m : Cluster.get(s).state().getMembers()) {
      up += m.status() == MemberStatus.up() ? 1 : 0;
    }
    return up;
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": not within 30 s");
      }
      Thread.sleep(100);
    }
  }

  /** Runs {@code check} on every poll for {@code during}: a failure ends the test at once. */
  private static void holds(Duration during, Runnable check) throws InterruptedException {
    long until = System.nanoTime() + during.toNanos();
    while (System.nanoTime() < until) {
      check.run();
      Thread.sleep(100);
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
