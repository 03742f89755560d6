package org.tensorcache.store.journal;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Journal settings read once from config: the bound on schema creation and the databases of the
 * configured journal, snapshot and durable-state plugins.
 *
 * @param schemaTimeout how long {@link JournalSchema#ensure} may take per database
 * @param databases the distinct JDBC databases of the configured plugins; empty when none of them
 *     is a JDBC plugin (an in-memory journal in tests)
 */
public record JournalSettings(Duration schemaTimeout, List<JournalDatabase> databases) {

  /** Config path of the key that bounds schema creation. */
  public static final String SCHEMA_TIMEOUT_PATH = "tensorcache.persistence.schema-timeout";

  private static final List<String> PLUGIN_SELECTORS =
      List.of(
          "pekko.persistence.journal.plugin",
          "pekko.persistence.snapshot-store.plugin",
          "pekko.persistence.state.plugin");

  /** Copies the database list. */
  public JournalSettings {
    databases = List.copyOf(databases);
  }

  /** Reads the settings of the given system. */
  public static JournalSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  /**
   * Returns the database of the journal plugin ({@code pekko.persistence.journal.plugin}) of a
   * resolved config.
   *
   * @throws IllegalArgumentException naming the plugin when it is no JDBC plugin
   */
  public static JournalDatabase journalDatabase(Config config) {
    String selector = PLUGIN_SELECTORS.get(0);
    String plugin = config.hasPath(selector) ? config.getString(selector) : "";
    return fromConfig(config).databases().stream()
        .filter(d -> d.plugins().contains(plugin))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "the journal plugin '"
                        + plugin
                        + "' ("
                        + selector
                        + ") has no JDBC database ("
                        + plugin
                        + ".slick.db.url); expected the h2 or postgres persistence profile"));
  }

  /** Reads the settings from a resolved config. */
  public static JournalSettings fromConfig(Config config) {
    // the plugins normally share one database; create its tables once
    Map<String, JournalDatabase> databases = new LinkedHashMap<>();
    for (String selector : PLUGIN_SELECTORS) {
      String plugin = config.hasPath(selector) ? config.getString(selector) : "";
      String slick = plugin + ".slick";
      if (plugin.isEmpty() || !config.hasPath(slick + ".db.url")) {
        continue;
      }
      Config db = config.getConfig(slick + ".db");
      JournalDatabase database =
          new JournalDatabase(
              db.getString("url"),
              db.hasPath("user") ? db.getString("user") : "",
              db.hasPath("password") ? db.getString("password") : "",
              JournalDialect.ofProfile(config.getString(slick + ".profile")),
              List.of(plugin));
      databases.merge(
          database.url() + "\u0000" + database.user(), database, JournalDatabase::withPluginsOf);
    }
    return new JournalSettings(
        config.getDuration(SCHEMA_TIMEOUT_PATH), List.copyOf(databases.values()));
  }
}
