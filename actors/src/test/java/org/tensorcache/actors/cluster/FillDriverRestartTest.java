package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
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
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.coordinator.CoordinatorState.FillRequested;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.Segments;

/**
 * The coordinator keeps only the manifest; its driver is a child of its own. A driver that fails is
 * restarted alone and rebuilt from the manifest, the coordinator untouched; a coordinator that
 * restarts spawns a fresh driver from the recovered manifest. Either way the fill completes, every
 * range recorded once, nothing computed twice.
 */
class FillDriverRestartTest {
  private static final String COORDINATOR = "tensorcache-coordinator";

  @TempDir Path dir;
  private ActorTestKit kit;

  @Test
  void aDriverThatFailsInASegmentWriteIsRestartedAloneAndTheFillCompletes() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), 256, 32);
    CacheDefinition plain = cache.definition();
    FailsThirdWrite store = new FailsThirdWrite(plain.segments());
    CacheDefinition definition = plain.withSegments(store, plain.segmentDir());
    kit = SingleNode.kit("FillDriverRestartTest", dir.resolve("node"));
    Journal journal = new Journal();
    PersistenceTestKit.create(kit.system()).withPolicy(journal);
    ActorRef<Coordinator.Command> coordinator = SingleNode.start(kit, definition);

    // the driver's supervisor logs the failure as it restarts the driver
    LoggingTestKit.error("injected fault")
        .withCustom(event -> event.message().contains("saw failure"))
        .expect(
            kit.system(),
            () -> {
              SingleNode.startFill(kit, coordinator, cache.cacheId());
              awaitPersisted(coordinator, cache.cacheId(), Duration.ofSeconds(90));
              return null;
            });
    assertTrue(store.failed.get(), "the fault was injected");
    int firstWrite = journal.indexOfFirstWrite();
    assertTrue(
        firstWrite > 0 && !journal.operations.subList(firstWrite, journal.size()).contains("read"),
        "the coordinator recovered once, before it wrote, and never again: " + journal.operations);
    assertEquals(
        cache.spec.rangeCount(),
        journal.written("RangePersisted"),
        "every range recorded once: " + journal.operations);
    assertEquals(256, cache.computedExamples.get(), "examples computed (each once)");
    SingleNode.assertAllValues(kit, cache);
  }

  @Test
  void aRestartedCoordinatorRespawnsItsDriverFromTheManifest() throws Exception {
    TestCache first = new TestCache(dir.resolve("first"), 128, 32);
    TestCache second = new TestCache(dir.resolve("second"), 96, 32);
    kit = SingleNode.kit("FillDriverRestartTest", dir.resolve("node"));
    Journal journal = new Journal();
    PersistenceTestKit.create(kit.system()).withPolicy(journal);
    TensorCacheNode.get(kit.system()).register(first.definition());
    ActorRef<Coordinator.Command> coordinator = SingleNode.start(kit, second.definition());
    SingleNode.startFill(kit, coordinator, first.cacheId());
    awaitPersisted(coordinator, first.cacheId(), Duration.ofSeconds(60));

    journal.failNext.set(true); // the second fill's request fails: the coordinator restarts
    LoggingTestKit.error("Failed to persist event type [" + FillRequested.class.getName())
        .expect(
            kit.system(),
            () -> {
              SingleNode.startFill(kit, coordinator, second.cacheId());
              return null;
            });
    int failed = journal.operations.indexOf("failed write [FillRequested]");
    assertTrue(
        failed > 0 && journal.operations.subList(failed, journal.size()).contains("read"),
        "the coordinator recovered again: " + journal.operations);
    awaitPersisted(coordinator, second.cacheId(), Duration.ofSeconds(60));
    CacheStatus restored = awaitPersisted(coordinator, first.cacheId(), Duration.ofSeconds(30));
    assertTrue(restored.restored(), "the new driver restored the first cache: " + restored);
    assertEquals(
        first.spec.rangeCount() + second.spec.rangeCount(),
        journal.written("RangePersisted"),
        "ranges persisted before the restart are not recorded again: " + journal.operations);
    assertEquals(0, journal.written("RangeLost"), journal.operations.toString());
    assertEquals(128, first.computedExamples.get(), "the first cache computed once");
    assertEquals(96, second.computedExamples.get());
    SingleNode.assertAllValues(kit, first);
    SingleNode.assertAllValues(kit, second);
  }

  private CacheStatus awaitPersisted(
      ActorRef<Coordinator.Command> coordinator, String cacheId, Duration within) {
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    return statuses.awaitAssert(
        within,
        Duration.ofMillis(300),
        () -> {
          coordinator.tell(new Coordinator.GetStatus(statuses.ref()));
          for (CacheStatus s : statuses.receiveMessage(Duration.ofSeconds(3)).caches()) {
            if (s.cacheId().equals(cacheId)) {
              assertEquals(s.ranges(), s.persistedRanges(), s.toString());
              return s;
            }
          }
          throw new AssertionError("no status of " + cacheId);
        });
  }

  /** Segments whose third write throws a fault that is not I/O, as a bug would. */
  private static final class FailsThirdWrite implements Segments<Block> {
    final AtomicBoolean failed = new AtomicBoolean();
    private final AtomicInteger writes = new AtomicInteger();
    private final Segments<Block> inner;

    FailsThirdWrite(Segments<Block> inner) {
      this.inner = inner;
    }

    @Override
    public void write(Block block) throws IOException {
      if (writes.incrementAndGet() == 3 && failed.compareAndSet(false, true)) {
        throw new IllegalStateException("injected fault in the write of range " + block.range());
      }
      inner.write(block);
    }

    @Override
    public Optional<Block> read(int range) throws IOException {
      return inner.read(range);
    }

    @Override
    public SortedSet<Integer> persistedRanges() throws IOException {
      return inner.persistedRanges();
    }

    @Override
    public Optional<Path> localCopy(int range) throws IOException {
      return inner.localCopy(range);
    }

    @Override
    public Optional<Path> presentLocally(int range) {
      return inner.presentLocally(range);
    }

    @Override
    public boolean isRemote() {
      return inner.isRemote();
    }

    @Override
    public int deleteTemporaries() throws IOException {
      return inner.deleteTemporaries();
    }

    @Override
    public String locationOf(int range) {
      return inner.locationOf(range);
    }
  }

  /**
   * The coordinator's journal operations in order (a recovery reads, a persist writes); fails the
   * next write once {@link #failNext} is set.
   */
  private static final class Journal implements ProcessingPolicy<JournalOperation> {
    final List<String> operations = new CopyOnWriteArrayList<>();
    final AtomicBoolean failNext = new AtomicBoolean();

    @Override
    public ProcessingResult tryProcess(String persistenceId, JournalOperation operation) {
      if (!persistenceId.equals(COORDINATOR)) {
        return ProcessingSuccess.getInstance();
      }
      if (operation instanceof WriteEvents write) {
        for (Object e : write.getBatch()) {
          String name = e.getClass().getSimpleName();
          if (failNext.compareAndSet(true, false)) {
            operations.add("failed write [" + name + "]");
            return StorageFailure.create(new IllegalStateException("journal refuses " + name));
          }
          operations.add("write [" + name + "]");
        }
      } else if (operation instanceof ReadEvents || operation == ReadSeqNum.getInstance()) {
        operations.add("read");
      }
      return ProcessingSuccess.getInstance();
    }

    int size() {
      return operations.size();
    }

    int indexOfFirstWrite() {
      for (int i = 0; i < operations.size(); i++) {
        if (operations.get(i).startsWith("write")) {
          return i;
        }
      }
      return -1;
    }

    int written(String event) {
      return (int) operations.stream().filter(o -> o.equals("write [" + event + "]")).count();
    }
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
