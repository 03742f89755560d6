package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.testing.RawConnection;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * The lookup port's limits hold against clients that hold connections without using them: at the
 * default cap of 64, 100 clients that send nothing cannot keep a real client out; a half-sent frame
 * is closed after the read timeout and an idle connection after the idle timeout; garbage gets a
 * PROTOCOL reply and a closed connection while others are served; a connection is refused at the
 * cap only when every one has a request in flight.
 */
class LookupPortLimitsTest {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(6);

  @TempDir static Path dir;
  private static ActorTestKit kit;
  private static TestCache served;
  private static TestCache held;
  private static float[][] reference;
  private static InetSocketAddress endpoint;

  @BeforeAll
  static void start() throws Exception {
    served = new TestCache(dir.resolve("served"), 96, 32);
    held = new TestCache(dir.resolve("held"), 64, 32); // its values are computed only when let
    held.gate.close();
    reference = served.reference();
    kit =
        ActorTestKit.create(
            "LookupPortLimitsTest",
            ConfigFactory.parseString(
                    "tensorcache.lookup.max-batch = 64\n"
                        + "tensorcache.lookup.endpoint.port = 0\n"
                        + "tensorcache.lookup.endpoint.read-timeout = "
                        + READ_TIMEOUT.toMillis()
                        + "ms\n"
                        + "tensorcache.lookup.endpoint.idle-timeout = "
                        + IDLE_TIMEOUT.toMillis()
                        + "ms\n")
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(served.definition());
    node.register(held.definition());
    TensorCache.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    endpoint = node.endpointAddress().orElseThrow();
    try (RemoteLookupClient client = client()) { // every value of the served cache computed
      assertValues(client.lookup(served.cacheId(), LongStream.range(0, 64).toArray()));
      assertValues(client.lookup(served.cacheId(), LongStream.range(32, 96).toArray()));
    }
  }

  @AfterAll
  static void stop() {
    held.gate.open();
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  @Test
  void aHundredSilentClientsCannotKeepARealClientOut() throws Exception {
    List<Socket> silent = new ArrayList<>();
    try {
      for (int i = 0; i < 100; i++) {
        silent.add(new Socket(endpoint.getAddress(), endpoint.getPort()));
      }
      long start = System.nanoTime();
      try (RemoteLookupClient client = client()) {
        assertValues(client.lookup(served.cacheId(), new long[] {5, 77, 5, 31}));
      }
      Duration served = Duration.ofNanos(System.nanoTime() - start);
      assertTrue(served.toMillis() < 1000, "a real client served after " + served);
      // the cap of 64 took the places of the silent clients that came first, not by a timeout
      for (int i = 0; i < 37; i++) {
        assertTrue(closed(silent.get(i), Duration.ofSeconds(2)), "silent client " + i + " closed");
      }
      assertFalse(closed(silent.get(99), Duration.ofMillis(50)), "the last silent client waits");
    } finally {
      for (Socket s : silent) {
        s.close();
      }
    }
  }

  @Test
  void aHalfSentFrameIsClosedAfterTheReadTimeoutAndAnIdleOneAfterTheIdleTimeout() throws Exception {
    try (RawConnection half = RawConnection.plain(endpoint);
        RawConnection idle = RawConnection.plain(endpoint)) {
      idle.send(LookupWire.encodeDescribe(idle.frames, utf8(served.cacheId())));
      assertEquals(LookupWire.OK, idle.reply().status());
      long idleSince = System.nanoTime();
      // a GET announced as 29 bytes, of which 7 come
      half.sendBytes(new byte[] {25, 0, 0, 0, 3, 1, 1, 0, 'c', 2, 0});
      Duration closed = half.timeToClose(Duration.ofSeconds(10));
      assertTrue(
          closed.compareTo(READ_TIMEOUT.minusMillis(200)) > 0
              && closed.compareTo(READ_TIMEOUT.plusSeconds(2)) < 0,
          "a half-sent frame closed after " + closed + ", read timeout " + READ_TIMEOUT);

      idle.timeToClose(Duration.ofSeconds(20));
      Duration idled = Duration.ofNanos(System.nanoTime() - idleSince);
      assertTrue(
          idled.compareTo(IDLE_TIMEOUT.minusMillis(200)) > 0
              && idled.compareTo(IDLE_TIMEOUT.plusSeconds(3)) < 0,
          "an idle connection closed after " + idled + ", idle timeout " + IDLE_TIMEOUT);
    }
  }

  @Test
  void garbageIsAProtocolErrorThatClosesOnlyItsConnection() throws Exception {
    Random random = new Random(11);
    try (RemoteLookupClient client = client()) {
      for (int round = 0; round < 30; round++) {
        byte[] body = new byte[1 + random.nextInt(200)];
        random.nextBytes(body);
        if (round % 3 == 0) {
          body[0] = (byte) (4 + random.nextInt(200)); // a version no node speaks
        } else if (round % 3 == 1 && body.length > 4) {
          body[0] = LookupWire.VERSION_3; // an op no version has, or a string past the frame
          body[1] = (byte) (round % 2 == 0 ? 7 + random.nextInt(100) : LookupWire.GET);
          body[2] = (byte) 0xff;
          body[3] = (byte) 0x7f;
        } else {
          body = new byte[] {LookupWire.VERSION_3}; // truncated
        }
        ByteBuffer frame = ByteBuffer.allocate(4 + body.length).order(ByteOrder.LITTLE_ENDIAN);
        try (RawConnection c = RawConnection.plain(endpoint)) {
          c.sendBytes(frame.putInt(body.length).put(body).array());
          RawConnection.Reply reply = c.reply();
          assertEquals(LookupWire.PROTOCOL, reply.status(), reply.message());
          assertTrue(c.closedWithin(Duration.ofSeconds(5)), "closed after " + reply.message());
        }
        long[] indices = {round, 95 - round};
        assertValues(client.lookup(served.cacheId(), indices)); // the node serves the others
      }
    }
  }

  @Test
  void aConnectionIsRefusedAtTheCapOnlyWhenEveryOneHasARequestInFlight() throws Exception {
    List<RawConnection> busy = new ArrayList<>();
    try {
      for (int i = 0; i < 64; i++) { // each waits for values the closed gate holds back
        RawConnection c = RawConnection.plain(endpoint);
        busy.add(c);
        c.send(
            LookupWire.encodeGet(
                c.frames, LookupWire.VERSION_3, utf8(held.cacheId()), new long[] {i}));
      }
      var metrics = TensorCacheNode.get(kit.system()).metrics();
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(10),
              () -> {
                assertEquals(64, metrics.portInFlight(), "requests read and in flight");
                return null;
              });
      try (RawConnection refused = RawConnection.plain(endpoint)) {
        RawConnection.Reply reply = refused.reply();
        assertEquals(LookupWire.FAILED, reply.status());
        assertTrue(
            reply.message().matches("lookup endpoint .* already serves 64 connections"),
            reply.message());
        assertTrue(refused.closedWithin(Duration.ofSeconds(5)));
      }
      for (RawConnection c : busy) {
        assertFalse(c.closedWithin(Duration.ofMillis(1)), "a request in flight is never closed");
      }
      held.gate.open();
      for (RawConnection c : busy) {
        assertEquals(LookupWire.OK, c.reply().status());
      }
    } finally {
      for (RawConnection c : busy) {
        c.close();
      }
    }
  }

  private static RemoteLookupClient client() {
    return RemoteLookupClient.connect(List.of(endpoint), Duration.ofSeconds(30));
  }

  private static boolean closed(Socket s, Duration wait) throws Exception {
    s.setSoTimeout((int) wait.toMillis());
    try {
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }

  private static void assertValues(Batch batch) {
    long[] indices = batch.indices();
    for (int f = 0; f < reference.length; f++) {
      float[] expected = new float[indices.length];
      for (int i = 0; i < indices.length; i++) {
        expected[i] = reference[f][(int) indices[i]];
      }
      assertArrayEquals(expected, (float[]) batch.values()[f], "field " + f);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
