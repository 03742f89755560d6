package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A node's binary lookup port: values equal the single-process reference bit for bit, whether the
 * replica holds them or they are computed on demand; bad input gets the same specific errors as a
 * member's lookup and changes nothing; a dead endpoint is skipped; a malformed frame is refused.
 */
class RemoteLookupTest {
  private static final int N = 96;

  @TempDir Path dir;
  private ActorTestKit kit;

  @Test
  void servesTheReferenceComputesMissingValuesAndRejectsBadInput() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), N, 32);
    float[][] reference = cache.reference();
    kit =
        ActorTestKit.create(
            "RemoteLookupTest",
            ConfigFactory.parseString(
                    "tensorcache.lookup.max-batch = 64\ntensorcache.lookup.endpoint.port = 0")
                .withFallback(TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\"")));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(cache.definition());
    ActorRef<Coordinator.Command> coordinator = TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    InetSocketAddress endpoint = node.endpointAddress().orElseThrow();
    String id = cache.cacheId();

    try (ServerSocket dead = new ServerSocket(0, 1, endpoint.getAddress())) {
      InetSocketAddress closed = new InetSocketAddress(endpoint.getAddress(), dead.getLocalPort());
      dead.close();
      try (RemoteLookupClient client =
          RemoteLookupClient.connect(List.of(closed, endpoint), Duration.ofSeconds(30))) {
        assertEquals(cache.spec, client.spec(id), "the spec travels whole");

        // nothing is computed yet: the node computes these on demand
        long[] early = {70, 3, 41, 3};
        assertValues(reference, early, client.lookup(id, early));
        assertTrue(cache.computedExamples.get() > 0, "the early lookup was computed");

        Fills.fill(kit, coordinator, id, Duration.ofSeconds(60));
        CacheStatus before = Fills.status(kit, coordinator, id);
        long computed = cache.computedExamples.get();
        Random random = new Random(5);
        for (int round = 0; round < 20; round++) {
          long[] indices = random.longs(1 + random.nextInt(64), 0, N).toArray();
          assertValues(reference, indices, client.lookup(id, indices));
        }
        float[][] reused = {new float[64], new float[64]};
        long[] three = {95, 0, 17};
        client.lookupInto(id, three, reused);
        for (int i = 0; i < three.length; i++) {
          assertEquals(reference[0][(int) three[i]], reused[0][i]);
          assertEquals(reference[1][(int) three[i]], reused[1][i]);
        }

        String[][] bad = {
          {id, "96", "index 96 out of range [0, 96) for cache '" + id + "'"},
          {id, "-1", "index -1 out of range [0, 96) for cache '" + id + "'"},
          {id, "batch", "batch of 65 indices for cache '" + id + "' is over the maximum 64"},
          {id, "empty", "empty batch for cache '" + id + "', expected 1..64 indices"},
          {"no-such-cache", "0", "unknown cache 'no-such-cache', expected one of "},
        };
        for (String[] c : bad) {
          long[] indices =
              switch (c[1]) {
                case "batch" -> new long[65];
                case "empty" -> new long[0];
                default -> new long[] {1, Long.parseLong(c[1])};
              };
          float[][] out = {new float[65], new float[65]};
          var e =
              assertThrows(
                  IllegalArgumentException.class,
                  () -> {
                    if (c[0].equals(id)) {
                      client.lookupInto(c[0], indices, out);
                    } else {
                      client.lookup(c[0], indices);
                    }
                  });
          assertTrue(e.getMessage().startsWith(c[2]), e.getMessage());
        }
        var shortOut =
            assertThrows(
                IllegalArgumentException.class,
                () -> client.lookupInto(id, three, new float[][] {new float[3], new float[2]}));
        assertEquals(
            "output array of field 'rejected_logp' holds 2 elements, expected at least 3",
            shortOut.getMessage());
        assertValues(reference, three, client.lookup(id, three)); // connections still in step
        assertEquals(before, Fills.status(kit, coordinator, id), "bad input changed nothing");
        assertEquals(computed, cache.computedExamples.get(), "a filled cache computes nothing");

        concurrentLookupsAreCorrect(client, id, reference);
      }
    }
    malformedFramesAreRefused(endpoint);
  }

  private void concurrentLookupsAreCorrect(RemoteLookupClient client, String id, float[][] ref)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int seed = t;
        done.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  for (int i = 0; i < 200; i++) {
                    long[] indices = random.longs(32, 0, N).toArray();
                    assertValues(ref, indices, client.lookup(id, indices));
                  }
                  return 200;
                }));
      }
      for (Future<Integer> f : done) {
        assertEquals(200, f.get());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A request of another protocol version, or a frame larger than any request can be, gets a
   * PROTOCOL reply, and the connection closes.
   */
  private static void malformedFramesAreRefused(InetSocketAddress endpoint) throws Exception {
    ByteBuffer version = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
    version.putInt(6).put((byte) 9).put(LookupWire.GET).putShort((short) 1).put((byte) 'x');
    version.put((byte) 0);
    assertRefused(endpoint, version.array(), "protocol version 9, expected 1, 2, 3 or 4");
    byte[] huge = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(200 << 20).array();
    // max-batch 64: 32 + 2 * 65535 + 8 * 64 bytes at most (a GET, or a session op with its run id)
    assertRefused(endpoint, huge, "frame of 209715200 bytes, expected 1..131614");
  }

  private static void assertRefused(InetSocketAddress endpoint, byte[] request, String expected)
      throws Exception {
    try (Socket s = new Socket(endpoint.getAddress(), endpoint.getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request);
      DataInputStream in = new DataInputStream(s.getInputStream());
      byte[] header = new byte[4];
      in.readFully(header);
      int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt();
      byte[] body = new byte[length];
      in.readFully(body);
      assertEquals(LookupWire.PROTOCOL, body[0]);
      assertEquals(expected, new String(body, 3, length - 3, StandardCharsets.UTF_8));
      assertEquals(-1, in.read(), "the endpoint closes the connection after a protocol error");
    }
  }

  private static void assertValues(float[][] reference, long[] indices, Batch batch) {
    assertArrayEquals(indices, batch.indices());
    for (int f = 0; f < reference.length; f++) {
      float[] expected = new float[indices.length];
      for (int i = 0; i < indices.length; i++) {
        expected[i] = reference[f][(int) indices[i]];
      }
      assertArrayEquals(expected, (float[]) batch.values()[f], "field " + f);
    }
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
