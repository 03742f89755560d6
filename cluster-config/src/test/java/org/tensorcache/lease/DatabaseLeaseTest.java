package org.tensorcache.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.coordination.lease.javadsl.LeaseProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.tensorcache.store.journal.JournalSchema;
import org.tensorcache.store.journal.JournalSettings;
import org.tensorcache.store.journal.LeaseTable;

/**
 * The lease against a running PostgreSQL server, named by {@code TENSORCACHE_PG_URL} (with {@code
 * TENSORCACHE_PG_USER} and {@code TENSORCACHE_PG_PASSWORD}); skipped without one. Each owner's
 * ActorSystem stands for a node; the leases come from {@link LeaseProvider} with the {@code
 * tensorcache.lease} config, as the Split Brain Resolver takes them.
 */
@EnabledIfEnvironmentVariable(named = "TENSORCACHE_PG_URL", matches = ".+")
class DatabaseLeaseTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration INTERVAL = Duration.ofMillis(500);

  /** Long enough for anything that must happen, however loaded the machine. */
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  private final List<ActorTestKit> kits = new ArrayList<>();
  private final String url = System.getenv("TENSORCACHE_PG_URL");

  @AfterEach
  void stopSystems() {
    kits.forEach(ActorTestKit::shutdownTestKit);
  }

  @Test
  void ofOwnersRacingForAFreeLeaseExactlyOneTakesIt() throws Exception {
    ActorTestKit node = node(url);
    for (int round = 0; round < 5; round++) {
      String name = "race-" + UUID.randomUUID();
      List<Lease> owners = new ArrayList<>();
      for (int o = 0; o < 4; o++) {
        owners.add(lease(node, name, "owner-" + o));
      }
      // each attempt runs on a thread of its own node's blocking dispatcher: all at once
      List<CompletableFuture<Boolean>> attempts = new ArrayList<>();
      for (Lease lease : owners) {
        attempts.add(lease.acquire().toCompletableFuture());
      }
      List<String> winners = new ArrayList<>();
      for (int o = 0; o < owners.size(); o++) {
        if (attempts.get(o).get(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
          winners.add("owner-" + o);
        } else {
          assertFalse(owners.get(o).checkLease(), "owner-" + o + " in round " + round);
        }
      }
      assertEquals(1, winners.size(), "owners holding " + name + " in round " + round);
      assertEquals(winners.get(0), holderOf(node, name), "the row's owner in round " + round);
    }
  }

  @Test
  void renewalsKeepTheLeaseLongAfterItsTtl() throws Exception {
    String name = "renewed-" + UUID.randomUUID();
    List<Optional<Throwable>> losses = new CopyOnWriteArrayList<>();
    Lease holder = lease(node(url), name, "holder");
    assertTrue(holder.acquire(losses::add).toCompletableFuture().get(60, TimeUnit.SECONDS));
    Lease other = lease(node(url), name, "other");
    Thread.sleep(3 * TTL.toMillis());
    assertFalse(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertEquals(List.of(), losses);
    // another owner's release frees nothing: it held nothing
    assertTrue(other.release().toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertFalse(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertTrue(holder.release().toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertFalse(holder.checkLease());
    assertTrue(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
  }

  @Test
  void expiryOfADeadHoldersLeaseLetsAnotherOwnerTakeIt() throws Exception {
    String name = "expiry-" + UUID.randomUUID();
    ActorTestKit dying = node(url);
    assertTrue(
        lease(dying, name, "dead").acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
    ActorTestKit alive = node(url);
    Lease other = lease(alive, name, "survivor");
    assertFalse(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
    dying.shutdownTestKit(); // a SIGKILL: no release, no more renewals
    kits.remove(dying);
    assertTrue(eventuallyTakes(other), "the survivor never took the lease of the dead holder");
    assertEquals("survivor", holderOf(alive, name));
  }

  @Test
  void aHolderWhoseRenewalsFailLosesTheLease() throws Exception {
    String name = "cut-" + UUID.randomUUID();
    URI server = URI.create(url.substring("jdbc:".length()));
    try (TcpGate gate = new TcpGate(new InetSocketAddress(server.getHost(), server.getPort()))) {
      String gated = url.replace(":" + server.getPort() + "/", ":" + gate.port() + "/");
      CompletableFuture<Optional<Throwable>> lost = new CompletableFuture<>();
      Lease holder = lease(node(gated), name, "cut-off");
      assertTrue(holder.acquire(lost::complete).toCompletableFuture().get(60, TimeUnit.SECONDS));
      Lease other = lease(node(url), name, "other");
      assertFalse(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));

      gate.cut(); // the holder can no longer reach the database
      Optional<Throwable> cause = lost.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertInstanceOf(LeaseException.class, cause.orElseThrow());
      assertFalse(holder.checkLease());
      assertTrue(eventuallyTakes(other), "the lease of the cut-off holder was never free");
    }
  }

  @Test
  void aMemberTakesTheLeaseBeforeAnyNodeMadeItsTable() throws Exception {
    String schema = "lease_" + UUID.randomUUID().toString().replace("-", "");
    try (Connection c = connect(url);
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    try {
      String fresh = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
      Lease lease = lease(node(fresh, false), "fresh", "member");
      assertTrue(lease.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
      try (Connection c = connect(fresh);
          ResultSet rs = c.getMetaData().getTables(null, schema, LeaseTable.TABLE, null)) {
        assertTrue(rs.next(), "no lease table in " + schema);
      }
    } finally {
      stopSystems();
      kits.clear();
      try (Connection c = connect(url);
          Statement s = c.createStatement()) {
        s.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }

  /** Tries to take the lease every 200 ms until it succeeds or {@link #PATIENCE} has passed. */
  private static boolean eventuallyTakes(Lease lease) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (System.nanoTime() < deadline) {
      if (lease.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS)) {
        return true;
      }
      Thread.sleep(200);
    }
    return false;
  }

  /** A node whose journal database is at {@code jdbcUrl}, with the lease table created. */
  private ActorTestKit node(String jdbcUrl) {
    return node(jdbcUrl, true);
  }

  /** A member whose journal database is at {@code jdbcUrl}; a node creates the tables. */
  private ActorTestKit node(String jdbcUrl, boolean node) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("tensorcache.persistence.postgres.url", jdbcUrl);
    settings.put(
        "tensorcache.persistence.postgres.user", env("TENSORCACHE_PG_USER", "tensorcache"));
    settings.put("tensorcache.persistence.postgres.password", env("TENSORCACHE_PG_PASSWORD", ""));
    settings.put("tensorcache.lease.heartbeat-timeout", TTL.toMillis() + "ms");
    settings.put("tensorcache.lease.heartbeat-interval", INTERVAL.toMillis() + "ms");
    // what is tested is who holds the lease, not how fast a loaded machine answers
    settings.put("tensorcache.lease.lease-operation-timeout", "30s");
    Config config =
        ConfigFactory.parseMap(settings)
            .withFallback(ConfigFactory.parseResources("tensorcache-persistence-postgres.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorTestKit kit = ActorTestKit.create("DatabaseLeaseTest", config);
    kits.add(kit);
    if (node) {
      JournalSchema.ensure(kit.system());
    }
    return kit;
  }

  private static Lease lease(ActorTestKit node, String name, String owner) {
    ExtendedActorSystem system = (ExtendedActorSystem) Adapter.toClassic(node.system());
    Lease lease = LeaseProvider.get(system).getLease(name, "tensorcache.lease", owner);
    assertInstanceOf(DatabaseLease.class, lease);
    return lease;
  }

  /** The owner of lease {@code name} as the database of {@code node} has it. */
  private static String holderOf(ActorTestKit node, String name) throws SQLException {
    LeaseTable table =
        LeaseTable.of(
            JournalSettings.journalDatabase(node.system().settings().config()),
            Duration.ofSeconds(30));
    return table.holder(name).map(LeaseTable.Holder::owner).orElse("nobody");
  }

  private static Connection connect(String jdbcUrl) throws SQLException {
    return DriverManager.getConnection(
        jdbcUrl, env("TENSORCACHE_PG_USER", "tensorcache"), env("TENSORCACHE_PG_PASSWORD", ""));
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null ? fallback : value;
  }
}
