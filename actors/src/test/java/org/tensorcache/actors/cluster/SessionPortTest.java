package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupReplies;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.lookup.SessionWire;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A trainer session over the lookup port serves exactly the steps, indices and values that a
 * member's session client gets for the same arguments, resumes at any step, and needs protocol
 * version 2.
 */
class SessionPortTest {
  @TempDir Path dir;
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  @Test
  void theLookupPortServesTheSameStepsAsAMembersSessionClient() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), 96, 32);
    kit =
        ActorTestKit.create(
            "SessionPortTest",
            ConfigFactory.parseString("tensorcache.lookup.endpoint.port = 0")
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(cache.definition());
    TensorCache.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    InetSocketAddress endpoint = node.endpointAddress().orElseThrow();
    String id = cache.cacheId();

    // rank 1 of 2, global batch 10: 5 indices a step, an epoch of 96 examples is 9 steps
    SessionClient member =
        TensorCacheClient.create(kit.system()).session(id, "member-run", 1, 2, 5, 10);
    try (Port port = new Port(endpoint)) {
      assertEquals(0, port.nextStep(SessionWire.OPEN, id, args("port-run", 2, 0)));
      for (int step = 0; step < 12; step++) { // into the second epoch
        TrainingBatch expected = member.next();
        Port.Step got = port.next(id, "port-run", step);
        assertEquals(expected.step(), got.step);
        assertEquals(expected.epoch(), got.epoch);
        assertArrayEquals(expected.indices(), got.indices);
        assertArrayEquals((float[]) expected.values().values()[0], got.values[0]);
        assertArrayEquals((float[]) expected.values().values()[1], got.values[1]);
      }
      // a trainer restarted from its checkpoint at step 4 gets step 4 again, then 5
      assertEquals(4, port.nextStep(SessionWire.RESUME, id, args("port-run", 0, 4)));
      member.resumeFrom(4);
      assertArrayEquals(member.next().indices(), port.next(id, "port-run", 4).indices);
      // asking for a step other than the next one is refused by name, and nothing is served
      var e = assertThrows(IllegalArgumentException.class, () -> port.next(id, "port-run", 9));
      assertTrue(e.getMessage().contains("served step 5, expected 9"), e.getMessage());
      assertEquals(6, port.nextStep(SessionWire.RESUME, id, args("port-run", 0, 6)));
      // the same request in protocol version 1 is a protocol error
      ByteBuffer old =
          SessionWire.encode(
              port.frames, LookupWire.VERSION_2, SessionWire.NEXT, utf8(id), args("x", 0, 0));
      old.put(4, LookupWire.VERSION);
      port.frames.send(old, port.out);
      var refused =
          assertThrows(
              ProtocolException.class,
              () -> LookupReplies.decodeStatus(port.frames.read(port.in), endpoint));
      assertTrue(refused.getMessage().contains("op 5 in protocol version 1"), refused.getMessage());
    }
  }

  private static SessionWire.Args args(String run, int worldSize, long step) {
    return new SessionWire.Args(run, 1, worldSize, 5, 10, step);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A client of the session ops on one connection, as another language would write it. */
  private static final class Port implements AutoCloseable {
    record Step(long step, long epoch, long[] indices, float[][] values) {}

    final Socket socket;
    final InputStream in;
    final OutputStream out;
    final LookupFrames frames = new LookupFrames();

    Port(InetSocketAddress endpoint) throws Exception {
      socket = new Socket(endpoint.getAddress(), endpoint.getPort());
      socket.setSoTimeout((int) Duration.ofSeconds(40).toMillis());
      in = new BufferedInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }

    long nextStep(byte op, String cacheId, SessionWire.Args a) throws Exception {
      frames.send(SessionWire.encode(frames, LookupWire.VERSION_2, op, utf8(cacheId), a), out);
      return LookupReplies.decodeStatus(frames.read(in), socket).getLong();
    }

    Step next(String cacheId, String run, long step) throws Exception {
      frames.send(
          SessionWire.encode(
              frames, LookupWire.VERSION_2, SessionWire.NEXT, utf8(cacheId), args(run, 0, step)),
          out);
      ByteBuffer r = LookupReplies.decodeStatus(frames.read(in), socket);
      long served = r.getLong();
      long epoch = r.getLong();
      long[] indices = new long[r.getInt()];
      for (int i = 0; i < indices.length; i++) {
        indices[i] = r.getLong();
      }
      float[][] values = new float[r.getShort()][];
      for (int f = 0; f < values.length; f++) {
        values[f] = new float[r.getInt()];
        r.asFloatBuffer().get(values[f]);
        r.position(r.position() + values[f].length * Float.BYTES);
      }
      return new Step(served, epoch, indices, values);
    }

    @Override
    public void close() throws Exception {
      socket.close();
    }
  }
}
