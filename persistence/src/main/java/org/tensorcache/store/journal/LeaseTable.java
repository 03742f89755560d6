package org.tensorcache.store.journal;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;

/**
 * Leases as rows of one table in the journal's PostgreSQL database: a lease's name, its owner and
 * until when the owner holds it. Every time is the database's ({@code now()}), never a node's
 * clock, so nodes whose clocks disagree still agree on who holds a lease.
 *
 * <p>Each call is one statement on a connection of its own, bounded by the operation timeout: a
 * lease is taken rarely (the Split Brain Resolver takes it for a decision and gives it back soon
 * after), and a fresh connection survives a database restart that a kept one would not.
 */
public final class LeaseTable {
  /** The table, created with the journal's ({@link JournalSchema}). */
  public static final String TABLE = "tensorcache_lease";

  /** Creates the table unless present. */
  static final String CREATE =
      "CREATE TABLE IF NOT EXISTS "
          + TABLE
          + " (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255) NOT NULL,"
          + " expires_at TIMESTAMPTZ NOT NULL, renewed_at TIMESTAMPTZ NOT NULL)";

  // one atomic statement: a row is inserted, or taken over only when it is ours or has expired;
  // two owners racing for a free lease serialize on the row, and the second sees the first's
  private static final String ACQUIRE =
      "INSERT INTO "
          + TABLE
          + " AS l (name, owner, expires_at, renewed_at)"
          + " VALUES (?, ?, now() + make_interval(secs => ?), now())"
          + " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner,"
          + " expires_at = EXCLUDED.expires_at, renewed_at = EXCLUDED.renewed_at"
          + " WHERE l.owner = EXCLUDED.owner OR l.expires_at <= now()";

  // an expired row is not renewed even when nobody took it: its owner cannot know that nobody
  // held it in between, so it has lost the lease
  private static final String RENEW =
      "UPDATE "
          + TABLE
          + " SET expires_at = now() + make_interval(secs => ?), renewed_at = now()"
          + " WHERE name = ? AND owner = ? AND expires_at > now()";

  // the row stays, expired, so that an operator still sees who held the lease last
  private static final String RELEASE =
      "UPDATE "
          + TABLE
          + " SET expires_at = now() WHERE name = ? AND owner = ? AND expires_at > now()";

  /** PostgreSQL's SQLSTATE of a table that does not exist. */
  private static final String UNDEFINED_TABLE = "42P01";

  private static final String HOLDER =
      "SELECT owner, EXTRACT(EPOCH FROM (expires_at - now())),"
          + " EXTRACT(EPOCH FROM (now() - renewed_at))"
          + " FROM "
          + TABLE
          + " WHERE name = ? AND expires_at > now()";

  /**
   * Who holds a lease, by the database's clock.
   *
   * @param owner the holder
   * @param remaining how long until the lease expires unless renewed
   * @param sinceRenewal how long ago the holder last took or renewed it
   */
  public record Holder(String owner, Duration remaining, Duration sinceRenewal) {}

  private final JournalDatabase database;
  private final Duration timeout;

  private LeaseTable(JournalDatabase database, Duration timeout) {
    this.database = database;
    this.timeout = timeout;
  }

  /**
   * The lease table of {@code database}, each call bounded by {@code timeout} (connecting, and the
   * statement).
   *
   * @throws IllegalArgumentException naming the url when the database is not PostgreSQL: the leases
   *     are meant for the database that all nodes of a cluster share
   */
  public static LeaseTable of(JournalDatabase database, Duration timeout) {
    if (database.dialect() != JournalDialect.POSTGRES) {
      throw new IllegalArgumentException(
          "leases need the cluster's PostgreSQL journal, but the journal database "
              + database.url()
              + " is "
              + database.dialect()
              + "; expected the postgres profile");
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException(
          "lease operation timeout " + timeout + " invalid, expected a positive duration");
    }
    return new LeaseTable(database, timeout);
  }

  /** The JDBC url of the database, for messages. */
  public String url() {
    return database.url();
  }

  /**
   * Takes lease {@code name} for {@code owner} until {@code ttl} from now, if it is free, has
   * expired or is already {@code owner}'s; false if another owner holds it.
   */
  public boolean acquire(String name, String owner, Duration ttl) throws SQLException {
    try (Connection c = connect()) {
      try {
        return acquire(c, name, owner, ttl);
      } catch (SQLException e) {
        if (!UNDEFINED_TABLE.equals(e.getSQLState())) {
          throw e;
        }
        // a member that is no node (status, fill) may decide before any node made the table
        try (PreparedStatement s = c.prepareStatement(CREATE)) {
          s.setQueryTimeout(timeoutSeconds());
          s.execute();
        }
        return acquire(c, name, owner, ttl);
      }
    }
  }

  private boolean acquire(Connection c, String name, String owner, Duration ttl)
      throws SQLException {
    try (PreparedStatement s = c.prepareStatement(ACQUIRE)) {
      s.setQueryTimeout(timeoutSeconds());
      s.setString(1, name);
      s.setString(2, owner);
      s.setDouble(3, seconds(ttl));
      return s.executeUpdate() == 1;
    }
  }

  /**
   * Moves the expiry of {@code owner}'s lease {@code name} to {@code ttl} from now; false if the
   * lease has expired or another owner holds it: then {@code owner} has lost it.
   */
  public boolean renew(String name, String owner, Duration ttl) throws SQLException {
    try (Connection c = connect();
        PreparedStatement s = c.prepareStatement(RENEW)) {
      s.setQueryTimeout(timeoutSeconds());
      s.setDouble(1, seconds(ttl));
      s.setString(2, name);
      s.setString(3, owner);
      return s.executeUpdate() == 1;
    }
  }

  /** Frees {@code owner}'s lease {@code name} now; false if {@code owner} did not hold it. */
  public boolean release(String name, String owner) throws SQLException {
    try (Connection c = connect();
        PreparedStatement s = c.prepareStatement(RELEASE)) {
      s.setQueryTimeout(timeoutSeconds());
      s.setString(1, name);
      s.setString(2, owner);
      return s.executeUpdate() == 1;
    }
  }

  /**
   * Who holds lease {@code name} now; empty when it is free, has expired or its table is not made
   * yet.
   */
  public Optional<Holder> holder(String name) throws SQLException {
    try (Connection c = connect();
        PreparedStatement s = c.prepareStatement(HOLDER)) {
      s.setQueryTimeout(timeoutSeconds());
      s.setString(1, name);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new Holder(rs.getString(1), duration(rs.getDouble(2)), duration(rs.getDouble(3))));
      }
    } catch (SQLException e) {
      if (UNDEFINED_TABLE.equals(e.getSQLState())) {
        return Optional.empty();
      }
      throw e;
    }
  }

  private Connection connect() throws SQLException {
    Properties properties =
        database.dialect().connectionProperties(database.user(), database.password(), timeout);
    // a server that stops answering mid-statement must not hold a renewal up past the lease
    properties.setProperty("socketTimeout", Integer.toString(timeoutSeconds()));
    return DriverManager.getConnection(database.url(), properties); // autocommit: one statement
  }

  private int timeoutSeconds() {
    return (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static Duration duration(double seconds) {
    return Duration.ofMillis(Math.round(seconds * 1000));
  }
}
