package org.tensorcache.store.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Creating the journal tables: idempotent, and a clear error when the database is unreachable. */
@ExtendWith(LogCapturingExtension.class)
class JournalSchemaTest {

  @TempDir Path dataDir;

  @Test
  void settingsOfTheH2ProfileNameOneDatabaseForAllPlugins() {
    JournalSettings settings = JournalSettings.fromConfig(JournalTestConfig.h2(dataDir));
    assertEquals(1, settings.databases().size());
    JournalDatabase database = settings.databases().get(0);
    assertEquals(JournalDialect.H2, database.dialect());
    assertEquals(
        List.of("jdbc-journal", "jdbc-snapshot-store", "jdbc-durable-state-store"),
        database.plugins());
    assertTrue(database.url().startsWith("jdbc:h2:file:" + dataDir + "/journal/tensorcache"));
    assertEquals(Duration.ofSeconds(30), settings.schemaTimeout());
  }

  @Test
  void postgresProfileTakesTheConfiguredServer() {
    Config config =
        JournalTestConfig.postgres(
            Map.of("tensorcache.persistence.postgres.url", "jdbc:postgresql://db.example:5433/x"));
    JournalDatabase database = JournalSettings.fromConfig(config).databases().get(0);
    assertEquals(JournalDialect.POSTGRES, database.dialect());
    assertEquals("jdbc:postgresql://db.example:5433/x", database.url());
    assertEquals(5, config.getInt("jdbc-journal.slick.db.maxConnections"));
  }

  @Test
  void everyIndexStatementIsGuarded() {
    for (JournalDialect dialect : JournalDialect.values()) {
      for (String sql : dialect.createStatements()) {
        if (sql.matches("(?is)^CREATE\\s+(UNIQUE\\s+)?INDEX.*")) {
          assertTrue(sql.contains("IF NOT EXISTS"), dialect + ": " + sql);
        }
      }
    }
  }

  @Test
  void onlyPostgresHasTheLeaseTable() {
    assertTrue(JournalDialect.POSTGRES.tables().contains(LeaseTable.TABLE));
    assertTrue(
        JournalDialect.POSTGRES.createStatements().stream()
            .anyMatch(sql -> sql.contains("IF NOT EXISTS " + LeaseTable.TABLE)));
    assertEquals(JournalDialect.TABLES, JournalDialect.H2.tables());
  }

  @Test
  void leasesOnAnH2JournalAreRefusedNamingItsUrl() {
    JournalDatabase database =
        JournalSettings.fromConfig(JournalTestConfig.h2(dataDir)).databases().get(0);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> LeaseTable.of(database, Duration.ofSeconds(3)));
    assertTrue(e.getMessage().contains(database.url()), e.getMessage());
    assertTrue(e.getMessage().contains("postgres"), e.getMessage());
  }

  @Test
  void theJournalDatabaseIsThatOfTheJournalPlugin() {
    Config config =
        JournalTestConfig.postgres(
            Map.of("tensorcache.persistence.postgres.url", "jdbc:postgresql://db.example:5433/x"));
    assertEquals(
        "jdbc:postgresql://db.example:5433/x", JournalSettings.journalDatabase(config).url());
    Config none =
        ConfigFactory.parseMap(Map.of("pekko.persistence.journal.plugin", "inmem"))
            .withFallback(config)
            .resolve();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.journalDatabase(none));
    assertTrue(e.getMessage().contains("'inmem'"), e.getMessage());
  }

  @Test
  void unsupportedProfileIsNamed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JournalDialect.ofProfile("slick.jdbc.MySQLProfile$"));
    assertTrue(e.getMessage().contains("slick.jdbc.MySQLProfile$"), e.getMessage());
  }

  @Test
  void ensureCreatesTheTablesOnceAndIsANoOpAfterwards() throws Exception {
    JournalDatabase database =
        JournalSettings.fromConfig(JournalTestConfig.h2(dataDir)).databases().get(0);
    Duration timeout = Duration.ofSeconds(10);
    JournalSchema.ensure(database, timeout, ForkJoinPool.commonPool());
    JournalSchema.ensure(database, timeout, ForkJoinPool.commonPool());
    try (Connection c = DriverManager.getConnection(database.url(), "sa", "")) {
      for (String table : JournalDialect.H2.tables()) {
        try (var rs = c.getMetaData().getTables(null, c.getSchema(), table, null)) {
          assertTrue(rs.next(), "table " + table + " missing");
        }
      }
    }
  }

  @Test
  void unreachableDatabaseFailsNamingItsUrl() {
    String url = "jdbc:postgresql://127.0.0.1:1/tensorcache";
    Config config =
        ConfigFactory.parseMap(Map.of("tensorcache.persistence.schema-timeout", "5s"))
            .withFallback(
                JournalTestConfig.postgres(Map.of("tensorcache.persistence.postgres.url", url)));
    ActorTestKit testKit = ActorTestKit.create("JournalSchemaTest", config);
    try {
      JournalUnavailableException e =
          assertThrows(
              JournalUnavailableException.class, () -> JournalSchema.ensure(testKit.system()));
      assertTrue(e.getMessage().contains(url), e.getMessage());
    } finally {
      testKit.shutdownTestKit();
    }
  }

  @Test
  void implicitlyRelativeH2PathFailsNamingTheUrl() {
    JournalDatabase database =
        new JournalDatabase(
            "jdbc:h2:file:data/journal/x", "sa", "", JournalDialect.H2, List.of("jdbc-journal"));
    JournalUnavailableException e =
        assertThrows(
            JournalUnavailableException.class,
            () -> JournalSchema.ensure(database, Duration.ofSeconds(5), ForkJoinPool.commonPool()));
    assertTrue(e.getMessage().contains("jdbc:h2:file:data/journal/x"), e.getMessage());
  }
}
