package org.tensorcache.chaostests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentStore;

/**
 * What the coordinator's journal records as persisted, read back through the JDBC read journal, and
 * the invariant that every such range has a segment that exists and verifies: the journal never
 * names a segment that is not durable.
 */
final class JournalRanges {
  private static final String COORDINATOR = "tensorcache-coordinator";

  private JournalRanges() {}

  /**
   * Ranges of {@code cacheId} in a {@code RangePersisted} event written at or after {@code
   * sinceMillis} (wall clock; a kept server may hold a cache of the same name from another run).
   */
  static Set<Integer> persisted(ActorSystem<?> system, String cacheId, long sinceMillis)
      throws Exception {
    JdbcReadJournal journal =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    List<EventEnvelope> events =
        journal
            .currentEventsByPersistenceId(COORDINATOR, 0L, Long.MAX_VALUE)
            .runWith(Sink.seq(), system)
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);
    Set<Integer> out = new TreeSet<>();
    for (EventEnvelope e : events) {
      if (e.timestamp() >= sinceMillis
          && e.event() instanceof RangePersisted p
          && p.cacheId().equals(cacheId)) {
        out.add(p.range());
      }
    }
    return out;
  }

  /** Ranges of {@code recorded} whose segment is missing or fails its checks now. */
  static List<Integer> withoutVerifiedSegment(CacheDefinition cache, Set<Integer> recorded)
      throws Exception {
    SegmentStore<Block> store =
        SegmentStore.open(cache.segmentDir(), cache.spec(), cache.fingerprint());
    List<Integer> bad = new ArrayList<>();
    for (int r : recorded) {
      try {
        if (store.read(r).filter(b -> b.isComplete()).isEmpty()) {
          bad.add(r);
        }
      } catch (SegmentRejectedException e) {
        bad.add(r);
      }
    }
    return bad;
  }

  /**
   * Checks the invariant into {@code report}: every range the journal records as persisted since
   * {@code sinceMillis}, but {@code damaged} (segments the episode itself damaged, which must be
   * rejected and recomputed instead), has a verified segment now.
   */
  static void check(
      ChaosReport report,
      String what,
      ClientMember client,
      CacheDefinition cache,
      long sinceMillis,
      Set<Integer> damaged)
      throws Exception {
    Set<Integer> recorded = persisted(client.system(), cache.cacheId(), sinceMillis);
    recorded.removeAll(damaged);
    List<Integer> bad = withoutVerifiedSegment(cache, recorded);
    report.journalWithoutSegment += bad.size();
    report.check(
        what + ": journal names only durable segments",
        bad.isEmpty() && !recorded.isEmpty(),
        recorded.size() + " ranges recorded, without a verified segment: " + bad);
  }

  /** Files in the segment directory under a segment's name that are not complete segments. */
  static List<String> halfWritten(CacheDefinition cache) throws Exception {
    SegmentStore<Block> store =
        SegmentStore.open(cache.segmentDir(), cache.spec(), cache.fingerprint());
    List<String> bad = new ArrayList<>();
    for (int r : Faults.persisted(cache.segmentDir())) {
      Path f = cache.segmentDir().resolve(SegmentStore.fileName(r));
      try {
        if (store.read(r).filter(b -> b.isComplete()).isEmpty() && Files.exists(f)) {
          bad.add(f.getFileName().toString());
        }
      } catch (SegmentRejectedException e) {
        bad.add(f.getFileName() + " (" + e.getMessage() + ")");
      }
    }
    return bad;
  }
}
