package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.actors.testing.Gate;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * Bad lookups, through the client and straight to the lookup actor, get an error naming the bad
 * value, and change nothing the coordinator reports.
 */
class BadInputTest {
  private static final int MAX_BATCH = 8;

  @TempDir Path dir;
  private ActorTestKit kit;
  private Gate held;

  @Test
  void badLookupsNameTheValueAndLeaveTheCacheUnchanged() throws Exception {
    TestCache filled = new TestCache(dir.resolve("filled"), 128, 64);
    // every forward pass of this cache waits at its closed gate until the test ends
    TestCache slow = new TestCache(dir.resolve("slow"), 64, 64);
    slow.gate.close();
    held = slow.gate;
    kit =
        ActorTestKit.create(
            "BadInputTest",
            ConfigFactory.parseString(
                    "tensorcache.lookup.max-batch = "
                        + MAX_BATCH
                        + "\ntensorcache.lookup.timeout = 300ms")
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(filled.definition());
    node.register(slow.definition());
    ActorRef<Coordinator.Command> coordinator = TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Fills.fill(kit, coordinator, filled.cacheId(), Duration.ofSeconds(40));
    List<CacheStatus> before =
        List.of(
            Fills.status(kit, coordinator, filled.cacheId()),
            Fills.status(kit, coordinator, slow.cacheId()));
    assertEquals(0, before.get(1).present(), "nothing of the slow cache is computed yet");

    TensorCacheClient client = TensorCacheClient.create(kit.system());
    ActorRef<LookupActor.Command> lookup = kit.spawn(LookupActor.create());
    String id = filled.cacheId();
    String[][] cases = {
      {id, "-1", "index -1 out of range [0, 128) for cache '" + id + "'"},
      {id, "128", "index 128 out of range [0, 128) for cache '" + id + "'"},
      {slow.cacheId(), "64", "index 64 out of range [0, 64) for cache '" + slow.cacheId() + "'"},
      {"no-such-cache", "0", "unknown cache 'no-such-cache', expected one of "},
      {id, "batch", "batch of 9 indices for cache '" + id + "' is over the maximum 8"},
    };
    for (String[] c : cases) {
      long[] indices =
          c[1].equals("batch") ? new long[MAX_BATCH + 1] : new long[] {3, Long.parseLong(c[1])};
      var thrown = assertThrows(IllegalArgumentException.class, () -> client.lookup(c[0], indices));
      assertTrue(thrown.getMessage().startsWith(c[2]), thrown.getMessage());
      float[][] buffers = {new float[16], new float[16]};
      var into =
          assertThrows(
              IllegalArgumentException.class, () -> client.lookupInto(c[0], indices, buffers));
      assertTrue(into.getMessage().startsWith(c[2]), into.getMessage());
      assertTrue(getBatchError(lookup, c[0], indices).startsWith(c[2]), c[2]);
    }
    long[] three = {3, 4, 5};
    var short1 =
        assertThrows(
            IllegalArgumentException.class,
            () -> client.lookupInto(id, three, new float[][] {new float[3], new float[2]}));
    assertEquals(
        "output array of field 'rejected_logp' holds 2 elements, expected at least 3",
        short1.getMessage());
    var oneField =
        assertThrows(
            IllegalArgumentException.class,
            () -> client.lookupInto(id, three, new float[][] {new float[3]}));
    assertTrue(
        oneField.getMessage().startsWith("1 output arrays for cache"), oneField.getMessage());
    float[][] reused = {new float[4], new float[4]};
    client.lookupInto(id, three, reused);
    var fresh = client.lookup(id, three);
    for (int f = 0; f < 2; f++) {
      assertArrayEquals((float[]) fresh.values()[f], java.util.Arrays.copyOf(reused[f], 3));
    }
    assertEquals(
        before,
        List.of(
            Fills.status(kit, coordinator, filled.cacheId()),
            Fills.status(kit, coordinator, slow.cacheId())));

    String slowId = slow.cacheId();
    String expected = "cache '" + slowId + "' failed: not computed within 300 ms";
    String direct = getBatchError(lookup, slowId, new long[] {40});
    assertTrue(direct.endsWith(expected), direct);
    var late =
        assertThrows(LookupFailedException.class, () -> client.lookup(slowId, new long[] {5}));
    assertTrue(late.getMessage().endsWith(expected), late.getMessage());
    slow.gate.awaitHeld(1, Duration.ofSeconds(5)); // they timed out behind a held pass
    assertEquals(0, slow.computedExamples.get(), "nothing of the slow cache was computed");
    assertEquals(
        before.get(0),
        Fills.status(kit, coordinator, filled.cacheId()),
        "the filled cache is unchanged");
  }

  private String getBatchError(ActorRef<LookupActor.Command> lookup, String cacheId, long[] idx) {
    TestProbe<StatusReply<LookupActor.Values>> replies = kit.createTestProbe();
    lookup.tell(new LookupActor.GetValues(cacheId, idx, replies.ref()));
    StatusReply<LookupActor.Values> reply = replies.receiveMessage(Duration.ofSeconds(5));
    assertTrue(reply.isError(), "an error expected for " + cacheId);
    return reply.getError().getMessage();
  }

  @AfterEach
  void stop() {
    if (held != null) {
      held.open(); // the node stops once the held pass has returned
    }
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
