package org.tensorcache.store.journal;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the tables of the JDBC persistence plugins on first start (on PostgreSQL also the lease
 * table of the cluster's downing, {@link LeaseTable}), so that an embedded node needs nothing
 * installed and a cluster's PostgreSQL needs only an empty database.
 *
 * <p>It connects with plain JDBC and closes its connection, rather than through the plugin's
 * connection pools: a pool left open would keep an H2 file database open after its ActorSystem
 * stopped.
 */
public final class JournalSchema {
  private static final Logger log = LoggerFactory.getLogger(JournalSchema.class);

  private JournalSchema() {}

  /**
   * Creates the missing journal, snapshot and durable-state tables in every database of the
   * system's persistence plugins, blocking until done; a no-op when all tables exist.
   *
   * @throws JournalUnavailableException naming the JDBC url when a database cannot be reached or
   *     its tables cannot be created within {@code tensorcache.persistence.schema-timeout}
   */
  public static void ensure(ActorSystem<?> system) {
    JournalSettings settings = JournalSettings.create(system);
    if (settings.databases().isEmpty()) {
      log.debug("no JDBC persistence plugin configured; no journal tables to create");
    }
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    for (JournalDatabase database : settings.databases()) {
      ensure(database, settings.schemaTimeout(), blocking);
    }
  }

  /** Creates the missing tables of one database on the given executor, waiting at most timeout. */
  /** How often creating the tables is tried when concurrent creators get in each other's way. */
  private static final int CREATE_ATTEMPTS = 5;

  static void ensure(JournalDatabase database, Duration timeout, Executor executor) {
    FutureTask<List<String>> creation =
        new FutureTask<>(() -> createMissingTables(database, timeout));
    executor.execute(creation);
    try {
      List<String> created = creation.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (created.isEmpty()) {
        log.debug("journal tables present in {}", database.url());
      } else {
        log.info("created journal tables {} in {}", created, database.url());
      }
    } catch (TimeoutException e) {
      creation.cancel(true);
      throw new JournalUnavailableException(
          "journal database "
              + database.url()
              + " did not answer within "
              + timeout
              + " ("
              + JournalSettings.SCHEMA_TIMEOUT_PATH
              + "); expected a reachable "
              + database.dialect()
              + " database",
          e);
    } catch (ExecutionException e) {
      throw new JournalUnavailableException(
          "cannot create the journal tables in "
              + database.url()
              + " as user '"
              + database.user()
              + "': "
              + e.getCause().getMessage(),
          e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new JournalUnavailableException(
          "interrupted while creating the journal tables in " + database.url(), e);
    }
  }

  private static List<String> createMissingTables(JournalDatabase database, Duration timeout)
      throws SQLException {
    try (Connection connection =
        DriverManager.getConnection(
            database.url(),
            database
                .dialect()
                .connectionProperties(database.user(), database.password(), timeout))) {
      List<String> missing = missingTables(connection, database.dialect());
      if (missing.isEmpty()) {
        return missing;
      }
      connection.setAutoCommit(true);
      for (int attempt = 1; ; attempt++) {
        try (Statement statement = connection.createStatement()) {
          for (String sql : database.dialect().createStatements()) {
            statement.execute(sql);
          }
          return missing;
        } catch (SQLException e) {
          // another node starting at the same time may have won the race for the same tables, or
          // PostgreSQL aborted one of two concurrent creators as a deadlock: the statements only
          // create what is missing, so trying again is safe
          if (missingTables(connection, database.dialect()).isEmpty()) {
            log.debug("journal tables created concurrently in {}", database.url(), e);
            return missing;
          }
          if (attempt == CREATE_ATTEMPTS) {
            throw e;
          }
          log.info(
              "creating the journal tables in {} failed, trying again: {}",
              database.url(),
              e.getMessage());
          sleepBeforeRetry(attempt);
        }
      }
    }
  }

  private static void sleepBeforeRetry(int attempt) throws SQLException {
    try {
      Thread.sleep(ThreadLocalRandom.current().nextLong(100, 300) * attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while creating the journal tables", e);
    }
  }

  private static List<String> missingTables(Connection connection, JournalDialect dialect)
      throws SQLException {
    List<String> missing = new ArrayList<>();
    for (String table : dialect.tables()) {
      try (ResultSet rs =
          connection
              .getMetaData()
              .getTables(connection.getCatalog(), connection.getSchema(), table, null)) {
        if (!rs.next()) {
          missing.add(table);
        }
      }
    }
    return missing;
  }
}
