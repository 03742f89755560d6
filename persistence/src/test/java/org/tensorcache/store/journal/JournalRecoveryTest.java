package org.tensorcache.store.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** An event-sourced entity persisted to an H2 file recovers its state in a new ActorSystem. */
@ExtendWith(LogCapturingExtension.class)
class JournalRecoveryTest {
  /** The first write starts the connection pool: slow on a loaded machine, so be patient. */
  private static final java.time.Duration PATIENCE = java.time.Duration.ofSeconds(20);

  private static final long[] AMOUNTS = {5, 7, 11, 13, 17, 19, 23};

  @TempDir Path dataDir;

  @Test
  void stateSurvivesARestartOfTheActorSystemOnTheSameDirectory() throws Exception {
    Config config = JournalTestConfig.h2(dataDir);
    long total = 0;

    ActorTestKit first = ActorTestKit.create("JournalRecoveryTest", config);
    try {
      JournalSchema.ensure(first.system());
      TestProbe<Long> snapshots = first.createTestProbe();
      TestProbe<TestLedger.State> replies = first.createTestProbe();
      ActorRef<TestLedger.Command> ledger =
          first.spawn(TestLedger.create("ledger-1", snapshots.ref()));
      for (long amount : AMOUNTS) {
        ledger.tell(new TestLedger.Add(amount, replies.ref()));
        total += amount;
        assertEquals(total, replies.receiveMessage(PATIENCE).total());
      }
      // wait for the snapshots: stopping the system could otherwise cut their writes short
      snapshots.expectMessage(PATIENCE, 3L);
      snapshots.expectMessage(PATIENCE, 6L);
    } finally {
      first.shutdownTestKit();
    }

    Path file = dataDir.resolve("journal").resolve("tensorcache.mv.db");
    assertTrue(Files.size(file) > 0, "H2 database file " + file + " is empty");
    try (Connection c =
        DriverManager.getConnection(JournalTestConfig.journalUrl(config), "sa", "")) {
      // only this connection: the stopped system left the database closed, not open in memory
      assertEquals(1, count(c, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS"));
      assertEquals(AMOUNTS.length, count(c, "SELECT COUNT(*) FROM \"event_journal\""));
      assertEquals(2, count(c, "SELECT COUNT(*) FROM \"snapshot\""));
    }

    ActorTestKit second = ActorTestKit.create("JournalRecoveryTest", config);
    try {
      JournalSchema.ensure(second.system());
      TestProbe<TestLedger.State> replies = second.createTestProbe();
      ActorRef<TestLedger.Command> ledger =
          second.spawn(TestLedger.create("ledger-1", second.<Long>createTestProbe().ref()));
      ledger.tell(new TestLedger.Get(replies.ref()));
      TestLedger.State recovered = replies.receiveMessage(PATIENCE);
      assertEquals(total, recovered.total());
      assertArrayEquals(AMOUNTS, recovered.amounts());
    } finally {
      second.shutdownTestKit();
    }
  }

  private static long count(Connection connection, String query) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
