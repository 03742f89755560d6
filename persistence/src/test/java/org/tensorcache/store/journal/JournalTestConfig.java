package org.tensorcache.store.journal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Resolved configs for tests: a persistence profile on top of the test and reference settings. */
final class JournalTestConfig {
  private JournalTestConfig() {}

  /** Returns the embedded H2 profile with its data directory at {@code dataDir}. */
  static Config h2(Path dataDir) {
    return withProfile("tensorcache-persistence-h2.conf", Map.of("tensorcache.data-dir", dataDir));
  }

  /** Returns the PostgreSQL profile with the given overrides of its keys. */
  static Config postgres(Map<String, Object> overrides) {
    return withProfile("tensorcache-persistence-postgres.conf", overrides);
  }

  private static Config withProfile(String resource, Map<String, ?> overrides) {
    Map<String, Object> values = new HashMap<>();
    overrides.forEach((k, v) -> values.put(k, v.toString()));
    return ConfigFactory.parseMap(values)
        .withFallback(ConfigFactory.parseResourcesAnySyntax(resource))
        .withFallback(ConfigFactory.parseResourcesAnySyntax("persistence-test.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  /** Returns the JDBC url that the plugins use under the given config. */
  static String journalUrl(Config config) {
    return config.getString("jdbc-journal.slick.db.url");
  }
}
