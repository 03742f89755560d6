package org.tensorcache.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.InetSocketAddress;
import java.net.URI;
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
      int winners = 0;
      for (int o = 0; o < owners.size(); o++) {
        boolean won = attempts.get(o).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        winners += won ? 1 : 0;
        assertEquals(won, owners.get(o).checkLease(), "owner-" + o + " in round " + round);
      }
      assertEquals(1, winners, "owners holding " + name + " in round " + round);
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
    Lease other = lease(node(url), name, "survivor");
    assertFalse(other.acquire().toCompletableFuture().get(60, TimeUnit.SECONDS));
    dying.shutdownTestKit(); // a SIGKILL: no release, no more renewals
    kits.remove(dying);
    assertTrue(eventuallyTakes(other), "the survivor never took the lease of the dead holder");
    assertTrue(other.checkLease());
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
    Map<String, Object> settings = new HashMap<>();
    settings.put("tensorcache.persistence.postgres.url", jdbcUrl);
    settings.put(
        "tensorcache.persistence.postgres.user", env("TENSORCACHE_PG_USER", "tensorcache"));
    settings.put("tensorcache.persistence.postgres.password", env("TENSORCACHE_PG_PASSWORD", ""));
    settings.put("tensorcache.lease.heartbeat-timeout", TTL.toMillis() + "ms");
    settings.put("tensorcache.lease.heartbeat-interval", INTERVAL.toMillis() + "ms");
    Config config =
        ConfigFactory.parseMap(settings)
            .withFallback(ConfigFactory.parseResources("tensorcache-persistence-postgres.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorTestKit kit = ActorTestKit.create("DatabaseLeaseTest", config);
    kits.add(kit);
    JournalSchema.ensure(kit.system());
    return kit;
  }

  private static Lease lease(ActorTestKit node, String name, String owner) {
    ExtendedActorSystem system = (ExtendedActorSystem) Adapter.toClassic(node.system());
    Lease lease = LeaseProvider.get(system).getLease(name, "tensorcache.lease", owner);
    assertInstanceOf(DatabaseLease.class, lease);
    return lease;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null ? fallback : value;
  }
}
