package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.JournalOperation;
import org.apache.pekko.persistence.testkit.ProcessingPolicy;
import org.apache.pekko.persistence.testkit.ProcessingResult;
import org.apache.pekko.persistence.testkit.ProcessingSuccess;
import org.apache.pekko.persistence.testkit.ReadEvents;
import org.apache.pekko.persistence.testkit.ReadSeqNum;
import org.apache.pekko.persistence.testkit.StorageFailure;
import org.apache.pekko.persistence.testkit.WriteEvents;
import org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.coordinator.CoordinatorState.FillRequested;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.actors.testing.TestCache;

/**
 * A journal write that fails (as when a downed node's old singleton wrote the same sequence number
 * first) restarts the coordinator, which recovers from the journal and goes on: it never stays
 * stopped, which would leave the cluster without a coordinator for good. The test sees the write
 * fail, the supervisor log it, and the coordinator read its journal again before its next write.
 */
class CoordinatorRestartTest {
  private static final String COORDINATOR = "tensorcache-coordinator";

  @TempDir Path dir;
  private ActorTestKit kit;

  @Test
  void aFailedJournalWriteRestartsTheCoordinatorAndTheFillCompletes() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), 64, 32);
    CacheDefinition definition = cache.definition();
    kit = SingleNode.kit("CoordinatorRestartTest", dir.resolve("node"));
    PersistenceTestKit journal = PersistenceTestKit.create(kit.system());
    ActorRef<Coordinator.Command> coordinator = SingleNode.start(kit, definition);

    FailsOneWrite journalOps = new FailsOneWrite(FillRequested.class, 0);
    journal.withPolicy(journalOps); // the fill's first event fails
    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    // the supervisor logs the failed write as it restarts the coordinator
    LoggingTestKit.error("Failed to persist event type [" + FillRequested.class.getName())
        .withCustom(event -> event.message().contains("saw failure"))
        .expect(
            kit.system(),
            () ->
                acks.awaitAssert(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(500),
                    () -> {
                      coordinator.tell(new Coordinator.StartFill(definition.cacheId(), acks.ref()));
                      assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(2)));
                      return null;
                    }));
    List<String> ops = List.copyOf(journalOps.operations);
    int failed = ops.indexOf("failed write [FillRequested]");
    assertTrue(failed > 0 && ops.subList(0, failed).contains("read"), "recovered, then " + ops);
    int next = failed + 1;
    while (next < ops.size() && !ops.get(next).startsWith("write")) {
      next++;
    }
    assertTrue(
        ops.subList(failed + 1, next).contains("read"),
        "the coordinator read its journal again (a new incarnation recovering) before it wrote: "
            + ops);
    assertEquals("write [FillRequested]", ops.get(next), ops.toString());
    SingleNode.awaitPersisted(kit, coordinator, Duration.ofSeconds(60));
    SingleNode.assertAllValues(kit, cache);
    assertEquals(
        1,
        journal.persistedInStorage(COORDINATOR).stream()
            .filter(e -> e instanceof FillRequested)
            .count(),
        "the failed event is not in the journal, its retry is");
    assertEquals(1, journalOps.operations.stream().filter(o -> o.startsWith("failed")).count());
  }

  /**
   * A journal outage in the middle of a fill, after some ranges were recorded as persisted: the
   * restarted coordinator must check those ranges' segments again (with a restorer of its own, its
   * old one stopped with it) and go on writing the rest, or the fill never completes.
   */
  @Test
  void aFailedJournalWriteMidFillRestartsTheCoordinatorAndTheFillCompletes() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), 256, 32);
    CacheDefinition definition = cache.definition();
    kit = SingleNode.kit("CoordinatorRestartTest", dir.resolve("node"));
    PersistenceTestKit journal = PersistenceTestKit.create(kit.system());
    FailsOneWrite journalOps = new FailsOneWrite(RangePersisted.class, 3);
    journal.withPolicy(journalOps); // the fourth range recorded fails
    ActorRef<Coordinator.Command> coordinator = SingleNode.start(kit, definition);

    SingleNode.startFill(kit, coordinator, definition.cacheId());
    SingleNode.awaitPersisted(kit, coordinator, Duration.ofSeconds(90));
    assertEquals(1, journalOps.operations.stream().filter(o -> o.startsWith("failed")).count());
    int failed = journalOps.operations.indexOf("failed write [RangePersisted]");
    assertTrue(
        journalOps.operations.subList(failed + 1, journalOps.operations.size()).contains("read"),
        "a new incarnation recovered: " + journalOps.operations);
    assertEquals(
        definition.spec().rangeCount(),
        journal.persistedInStorage(COORDINATOR).stream()
            .filter(e -> e instanceof RangePersisted)
            .count(),
        "every range is recorded once: " + journalOps.operations);
    SingleNode.assertAllValues(kit, cache);
  }

  /**
   * Fails one write of the coordinator's, like a journal that refuses it: the first that holds an
   * event of {@code type} after {@code skip} such writes went through. Records every journal
   * operation of the coordinator in order: a recovery reads, a persist writes.
   */
  private static final class FailsOneWrite implements ProcessingPolicy<JournalOperation> {
    final List<String> operations = new CopyOnWriteArrayList<>();
    private final AtomicBoolean failed = new AtomicBoolean();
    private final Class<?> type;
    private final AtomicInteger before;

    FailsOneWrite(Class<?> type, int skip) {
      this.type = type;
      this.before = new AtomicInteger(skip);
    }

    @Override
    public ProcessingResult tryProcess(String persistenceId, JournalOperation operation) {
      if (!persistenceId.equals(COORDINATOR)) {
        return ProcessingSuccess.getInstance();
      }
      if (operation instanceof WriteEvents write) {
        String events =
            write.getBatch().stream()
                .map(e -> e.getClass().getSimpleName())
                .collect(Collectors.joining(", ", "[", "]"));
        boolean ofType = write.getBatch().stream().anyMatch(type::isInstance);
        if (ofType && before.getAndDecrement() <= 0 && failed.compareAndSet(false, true)) {
          operations.add("failed write " + events);
          return StorageFailure.create(new IllegalStateException("journal refuses " + events));
        }
        operations.add("write " + events);
      } else if (operation instanceof ReadEvents || operation == ReadSeqNum.getInstance()) {
        operations.add("read");
      }
      return ProcessingSuccess.getInstance();
    }
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
