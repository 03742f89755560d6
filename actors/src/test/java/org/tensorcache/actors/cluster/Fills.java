package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;

/** Fills a cache through a node's coordinator and reads its status, for single-node tests. */
final class Fills {
  private Fills() {}

  /** Starts a fill of {@code cacheId} and waits until every range is persisted. */
  static void fill(
      ActorTestKit kit,
      ActorRef<Coordinator.Command> coordinator,
      String cacheId,
      Duration within) {
    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    acks.awaitAssert(
        Duration.ofSeconds(20),
        () -> {
          coordinator.tell(new Coordinator.StartFill(cacheId, acks.ref()));
          assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(3)));
          return null;
        });
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    statuses.awaitAssert(
        within,
        Duration.ofMillis(300),
        () -> {
          CacheStatus s = status(kit, coordinator, cacheId);
          assertEquals(s.ranges(), s.persistedRanges(), s.toString());
          return null;
        });
  }

  /** The coordinator's status of {@code cacheId}. */
  static CacheStatus status(
      ActorTestKit kit, ActorRef<Coordinator.Command> coordinator, String cacheId) {
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    coordinator.tell(new Coordinator.GetStatus(statuses.ref()));
    for (CacheStatus s : statuses.receiveMessage(Duration.ofSeconds(5)).caches()) {
      if (s.cacheId().equals(cacheId)) {
        return s;
      }
    }
    throw new AssertionError("no status of " + cacheId);
  }
}
