package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ByReference;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupReplies;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.HalfFloats;

/**
 * A cache of BF16 vectors, gossiped and replicated by reference: members, the lookup port in
 * version 3 and the Java remote client serve the values a single process stores, bit for bit; a
 * version-2 request is refused by name.
 */
class TypedCacheTest {
  private static final int N = 320;
  private static final String FIELD = "chosen_hidden_mean";

  @TempDir Path dir;

  @Test
  void bf16VectorsAreServedBitForBitEverywhere() throws Exception {
    run("tensorcache.lookup.endpoint.port = 0", false);
  }

  @Test
  void bf16VectorsReplicatedByReferenceToo() throws Exception {
    run(
        "tensorcache.lookup.endpoint.port = 0\ntensorcache.replication.gossip-budget = 2 KiB",
        true);
  }

  private void run(String config, boolean byReference) throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), N, 64, DType.BF16);
    assertEquals(DType.BF16, cache.spec.fields().get(0).dtype());
    short[] reference = (short[]) cache.storedReference()[0];
    int width = cache.spec.fields().get(0).width();
    long[] all = new long[N];
    for (int i = 0; i < N; i++) {
      all[i] = N - 1 - i;
    }
    try (TestCluster cluster =
        new TestCluster(dir.resolve("node"), List.of(cache.definition()), config)) {
      cluster.add("\"compute\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      TensorCacheNode node = TensorCacheNode.get(trainer.system());
      assertEquals(byReference, (node.replication(cache.cacheId()) instanceof ByReference));
      ClusterFillTest.startFill(cluster, cache);
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));

      TensorCacheClient client = TensorCacheClient.create(trainer.system());
      Batch batch = ClusterFillTest.awaitBatch(trainer, client, cache.cacheId(), all);
      short[] got = batch.shorts(FIELD);
      for (int i = 0; i < N; i++) {
        for (int k = 0; k < width; k++) {
          assertEquals(reference[(int) all[i] * width + k], got[i * width + k], "index " + all[i]);
        }
      }
      float[] decoded = batch.asFloats(FIELD);
      assertEquals(HalfFloats.bf16ToFloat(got[5]), decoded[5]);
      var wrongAccessor = assertThrows(IllegalArgumentException.class, () -> batch.floats(FIELD));
      assertTrue(
          wrongAccessor.getMessage().contains("is BF16, not F32"), wrongAccessor.getMessage());

      InetSocketAddress endpoint = node.endpointAddress().orElseThrow();
      try (RemoteLookupClient remote =
          RemoteLookupClient.connect(List.of(endpoint), Duration.ofSeconds(30))) {
        Batch viaPort = remote.lookup(cache.cacheId(), all);
        assertArrayEquals(got, viaPort.shorts(FIELD), "the port serves what members get");
      }
      assertVersion2IsRefused(endpoint, cache.cacheId());
    }
  }

  /** A version-2 GET of a BF16 cache is a BAD_REQUEST naming the field; the connection stays. */
  private static void assertVersion2IsRefused(InetSocketAddress endpoint, String cacheId)
      throws Exception {
    try (Socket s = new Socket(endpoint.getAddress(), endpoint.getPort())) {
      s.setSoTimeout(30_000);
      LookupFrames frames = new LookupFrames();
      OutputStream out = s.getOutputStream();
      var in = new BufferedInputStream(s.getInputStream());
      byte[] id = cacheId.getBytes(StandardCharsets.UTF_8);
      for (int attempt = 0; attempt < 2; attempt++) {
        frames.send(LookupWire.encodeGet(frames, LookupWire.VERSION_2, id, new long[] {1}), out);
        var refused =
            assertThrows(
                IllegalArgumentException.class,
                () -> LookupReplies.decodeStatus(frames.read(in), endpoint));
        assertEquals(
            "field '"
                + FIELD
                + "' of cache '"
                + cacheId
                + "' is BF16: protocol version 3 is needed for fields other than F32",
            refused.getMessage());
      }
    }
  }
}
