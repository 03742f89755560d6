package org.tensorcache.chaostests;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * At most one coordinator active at any instant, as its journal tells: pekko-persistence-jdbc
 * writes each event with the {@code writer} (a UUID per incarnation of the persistent actor) and
 * the {@code write_timestamp} (ms, the writer's clock; one machine, one clock). In sequence order,
 * each incarnation's events form one unbroken run, and the run of the next starts after the last
 * event of the one before: an incarnation that writes again after another has begun, or before the
 * one before has written its last event, was active beside it.
 */
final class JournalWriters {
  /** The coordinator's persistence id (Coordinator, {@code PersistenceId.ofUniqueId}). */
  static final String COORDINATOR = "tensorcache-coordinator";

  /** What the journal says: the incarnations in order and the first violation, if any. */
  record Verdict(int writers, long events, long minGapMs, String violation) {}

  /** One event: its writer, sequence number and write time. */
  record Row(String writer, long sequenceNr, long timestamp) {}

  private JournalWriters() {}

  /** Reads the events of {@code persistenceId} from the PostgreSQL named by {@code pg}. */
  static Verdict read(Map<String, String> pg, String persistenceId) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (Connection c =
            DriverManager.getConnection(
                pg.get("TENSORCACHE_PG_URL"),
                pg.get("TENSORCACHE_PG_USER"),
                pg.get("TENSORCACHE_PG_PASSWORD"));
        PreparedStatement s =
            c.prepareStatement(
                "SELECT writer, sequence_number, write_timestamp FROM event_journal"
                    + " WHERE persistence_id = ? ORDER BY sequence_number, ordering")) {
      s.setString(1, persistenceId);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          rows.add(new Row(r.getString(1), r.getLong(2), r.getLong(3)));
        }
      }
    }
    return judge(rows);
  }

  /** The verdict on {@code rows} in sequence order. */
  static Verdict judge(List<Row> rows) {
    Set<String> ended = new HashSet<>(); // incarnations another has followed
    long minGap = Long.MAX_VALUE;
    Row last = null;
    long runStart = -1;
    long lastOfPrevious = Long.MIN_VALUE;
    for (Row r : rows) {
      if (last != null && r.sequenceNr() <= last.sequenceNr()) {
        return violation(
            rows,
            ended,
            minGap,
            "sequence number "
                + r.sequenceNr()
                + " after "
                + last.sequenceNr()
                + " ("
                + last.writer()
                + ", then "
                + r.writer()
                + ")");
      }
      if (last == null || !r.writer().equals(last.writer())) {
        if (ended.contains(r.writer())) {
          return violation(
              rows,
              ended,
              minGap,
              "writer "
                  + r.writer()
                  + " writes again at "
                  + r.sequenceNr()
                  + " after another incarnation began");
        }
        if (last != null) {
          ended.add(last.writer());
          lastOfPrevious = last.timestamp();
          if (r.timestamp() < lastOfPrevious) {
            return violation(
                rows,
                ended,
                minGap,
                "writer "
                    + r.writer()
                    + " began at "
                    + r.timestamp()
                    + " ms, before "
                    + last.writer()
                    + " wrote its last event at "
                    + lastOfPrevious
                    + " ms (sequence "
                    + last.sequenceNr()
                    + ")");
          }
          minGap = Math.min(minGap, r.timestamp() - lastOfPrevious);
        }
        runStart = r.timestamp();
      } else if (r.timestamp() < runStart) {
        return violation(
            rows,
            ended,
            minGap,
            "writer "
                + r.writer()
                + " wrote sequence "
                + r.sequenceNr()
                + " at "
                + r.timestamp()
                + " ms, before its run began");
      }
      last = r;
    }
    int writers = ended.size() + (last == null ? 0 : 1);
    return new Verdict(writers, rows.size(), minGap == Long.MAX_VALUE ? -1 : minGap, null);
  }

  private static Verdict violation(List<Row> rows, Set<String> ended, long minGap, String what) {
    return new Verdict(ended.size() + 1, rows.size(), minGap == Long.MAX_VALUE ? -1 : minGap, what);
  }

  /** Checks the coordinator's journal into {@code report} under {@code name}. */
  static void check(Map<String, String> pg, ChaosReport report, String name) throws SQLException {
    Verdict v = read(pg, COORDINATOR);
    report.check(
        name + ": at most one coordinator at a time",
        v.violation() == null,
        v.writers()
            + " incarnations, "
            + v.events()
            + " events, closest handover "
            + v.minGapMs()
            + " ms"
            + (v.violation() == null ? "" : ": " + v.violation()));
  }
}
