package org.tensorcache.store.journal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A database that the journal runs on, with the DDL that pekko-persistence-jdbc ships for it.
 *
 * <p>The DDL is taken from the plugin's jar, so it always matches the plugin's version, and made
 * idempotent: the shipped scripts create some indexes without {@code IF NOT EXISTS}, which fails
 * (and logs an error) on every start after the first.
 */
public enum JournalDialect {
  /** Embedded H2 file database, the default of a single node. */
  H2("slick.jdbc.H2Profile$", "schema/h2/h2-create-schema.sql"),
  /** PostgreSQL server shared by the nodes of a cluster. */
  POSTGRES("slick.jdbc.PostgresProfile$", "schema/postgres/postgres-create-schema.sql");

  /** Tables that the plugins use with the default DAOs. */
  static final List<String> TABLES =
      List.of("event_journal", "event_tag", "snapshot", "durable_state");

  private static final Pattern INDEX_WITHOUT_GUARD =
      Pattern.compile(
          "^CREATE\\s+(UNIQUE\\s+)?INDEX\\s+(CONCURRENTLY\\s+)?(?!IF\\s+NOT\\s+EXISTS\\b)",
          Pattern.CASE_INSENSITIVE);

  private final String profile;
  private final String createScript;

  JournalDialect(String profile, String createScript) {
    this.profile = profile;
    this.createScript = createScript;
  }

  /** Returns the Slick profile that selects this dialect in {@code <plugin>.slick.profile}. */
  public String profile() {
    return profile;
  }

  /**
   * Returns the dialect of a Slick profile class name.
   *
   * @throws IllegalArgumentException naming the profile when it is not H2 or PostgreSQL
   */
  public static JournalDialect ofProfile(String profile) {
    return Arrays.stream(values())
        .filter(d -> d.profile.equals(profile))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "Slick profile '"
                        + profile
                        + "' is not supported by the journal; expected one of "
                        + Arrays.stream(values()).map(JournalDialect::profile).toList()));
  }

  /**
   * Returns the tables of this dialect: the plugins' and, on PostgreSQL, the lease table of the
   * cluster's downing ({@link LeaseTable}); all present means nothing to create.
   */
  public List<String> tables() {
    List<String> tables = new ArrayList<>(TABLES);
    if (this == POSTGRES) {
      tables.add(LeaseTable.TABLE);
    }
    return tables;
  }

  /**
   * Returns the statements that create every table of {@link #tables()} and index unless present.
   */
  public List<String> createStatements() {
    List<String> statements =
        new ArrayList<>(
            Arrays.stream(readScript().split(";"))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .map(JournalDialect::guardIndex)
                .toList());
    // only PostgreSQL: an H2 journal is one machine's, whose nodes keep the keep-majority downing
    if (this == POSTGRES) {
      statements.add(LeaseTable.CREATE);
    }
    return statements;
  }

  /** Returns the JDBC connection properties, with connect timeouts where the driver has them. */
  Properties connectionProperties(String user, String password, Duration timeout) {
    Properties properties = new Properties();
    properties.setProperty("user", user);
    properties.setProperty("password", password);
    if (this == POSTGRES) {
      String seconds = Long.toString(Math.max(1, timeout.toSeconds()));
      properties.setProperty("connectTimeout", seconds);
      properties.setProperty("loginTimeout", seconds);
    }
    return properties;
  }

  private static String guardIndex(String statement) {
    Matcher m = INDEX_WITHOUT_GUARD.matcher(statement);
    if (!m.find()) {
      return statement;
    }
    String unique = m.group(1) == null ? "" : "UNIQUE ";
    String concurrently = m.group(2) == null ? "" : "CONCURRENTLY ";
    return "CREATE "
        + unique
        + "INDEX "
        + concurrently
        + "IF NOT EXISTS "
        + statement.substring(m.end());
  }

  private String readScript() {
    try (InputStream in = JournalDialect.class.getClassLoader().getResourceAsStream(createScript)) {
      if (in == null) {
        throw new IllegalStateException(
            "DDL resource " + createScript + " not found; expected it in pekko-persistence-jdbc");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read DDL resource " + createScript, e);
    }
  }
}
