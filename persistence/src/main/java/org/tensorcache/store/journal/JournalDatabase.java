package org.tensorcache.store.journal;

import java.util.ArrayList;
import java.util.List;

/**
 * One database behind the persistence plugins, as configured in {@code <plugin>.slick}.
 *
 * @param url JDBC url
 * @param user database user
 * @param password database password, never printed
 * @param dialect H2 or PostgreSQL, from the Slick profile
 * @param plugins config paths of the plugins that use this database
 */
public record JournalDatabase(
    String url, String user, String password, JournalDialect dialect, List<String> plugins) {

  /** Copies the plugin list. */
  public JournalDatabase {
    plugins = List.copyOf(plugins);
  }

  /** Returns this database used also by the plugins of {@code other}. */
  JournalDatabase withPluginsOf(JournalDatabase other) {
    List<String> all = new ArrayList<>(plugins);
    all.addAll(other.plugins);
    return new JournalDatabase(url, user, password, dialect, all);
  }

  @Override
  public String toString() {
    return "JournalDatabase[url="
        + url
        + ", user="
        + user
        + ", dialect="
        + dialect
        + ", plugins="
        + plugins
        + "]";
  }
}
