package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ByReference;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupReplies;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.actors.lookup.SessionWire;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * A cache ten times the trainer node's memory budget: served bit for bit in random and in trainer
 * order with the hot tier never above the budget; a session's steps after the first come from what
 * was prefetched; a trainer node stopped while prefetching loses nothing.
 */
class TieredCacheTest {
  private static final int N = 1280;
  private static final int RANGE = 32;
  private static final int BATCH = 16;
  private static final String FIELD = "chosen_hidden_mean";
  // 40 ranges of 32 rows of 24 floats (3 KiB each, 120 KiB in all); the budget holds a tenth
  private static final String CONFIG =
      String.join(
          "\n",
          "tensorcache.replication.gossip-budget = 2 KiB",
          "tensorcache.memory.budget = 12 KiB",
          "tensorcache.prefetch.steps = 4",
          "tensorcache.lookup.endpoint.port = 0");

  @TempDir Path dir;

  @Test
  void aCacheTenTimesTheBudgetIsServedExactlyWithinIt() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), N, RANGE, true);
    float[] reference = cache.reference()[0];
    int width = cache.spec.fields().get(0).width();
    long cacheBytes = (long) N * width * Float.BYTES;
    try (TestCluster cluster =
        new TestCluster(dir.resolve("node"), List.of(cache.definition()), CONFIG)) {
      cluster.add("\"compute\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      HotTier hot = TensorCacheNode.get(trainer.system()).hotTier();
      assertTrue(
          TensorCacheNode.get(trainer.system()).replication(cache.cacheId())
              instanceof ByReference);
      assertTrue(cacheBytes >= 10 * hot.budgetBytes(), cacheBytes + " vs " + hot.budgetBytes());
      ClusterFillTest.startFill(cluster, cache);
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(90));
      TensorCacheClient client = TensorCacheClient.create(trainer.system());

      // random order, the whole cache twice over
      List<Long> order = new ArrayList<>();
      for (long i = 0; i < N; i++) {
        order.add(i);
        order.add(i);
      }
      Collections.shuffle(order, new Random(3));
      for (int from = 0; from < order.size(); from += 64) {
        long[] idx = order.subList(from, from + 64).stream().mapToLong(Long::longValue).toArray();
        Batch b = ClusterFillTest.awaitBatch(trainer, client, cache.cacheId(), idx);
        assertRows(reference, width, idx, b.floats(FIELD));
      }
      TierStats.Snapshot afterRandom = hot.stats(cache.cacheId()).snapshot();
      assertTrue(afterRandom.warmHits() > 0, "random lookups read mapped segments: " + afterRandom);

      // trainer order: a step's rows are prefetched while the trainer works on the one before
      SessionClient session = client.session(cache.cacheId(), "tiers", 0, 1, 11, BATCH);
      TrainingBatch first = session.next();
      assertRows(reference, width, first.indices(), first.values().floats(FIELD));
      String sessionId = TrainerSession.entityId("tiers", 0);
      LocalLookup local = LocalLookup.get(trainer.system());
      awaitPrefetched(trainer, local, sessionId, 1);
      TierStats.Snapshot warm = hot.stats(cache.cacheId()).snapshot();
      int steps = 40;
      for (int s = 1; s <= steps; s++) {
        TrainingBatch step = session.next();
        assertEquals(s, step.step());
        assertRows(reference, width, step.indices(), step.values().floats(FIELD));
        // the trainer works on the step for as long as the next one takes to come in
        awaitPrefetched(trainer, local, sessionId, s + 1);
      }
      TierStats.Snapshot done = hot.stats(cache.cacheId()).snapshot();
      assertEquals(
          (long) steps * BATCH, done.hotHits() - warm.hotHits(), "after warm-up, all hot: " + done);
      assertEquals(warm.warmHits(), done.warmHits());
      assertEquals(warm.coldHits(), done.coldHits());
      assertTrue(done.meanPrefetchLead() >= 1, "steps were ready ahead: " + done);
      assertTrue(
          hot.peakBytesHeld() <= hot.budgetBytes(),
          "hot tier peak " + hot.peakBytesHeld() + " over the budget " + hot.budgetBytes());
      assertTrue(done.evictions() > 0, "the budget made the tier evict: " + done);

      // a trainer outside the cluster, through the node's lookup port, is prefetched for alike
      portSession(trainer, cache, reference, width, hot);

      // a trainer node stopped while it prefetches: its replacement serves the same steps
      ActorTestKit second = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      SessionClient doomed =
          TensorCacheClient.create(second.system())
              .session(cache.cacheId(), "tiers-2", 0, 1, 5, 64);
      List<long[]> seen = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        seen.add(doomed.next().indices()); // each asks for the next four steps ahead
      }
      Cluster.get(trainer.system())
          .manager()
          .tell(new Down(Cluster.get(second.system()).selfMember().address()));
      second.shutdownTestKit();
      cluster.nodes.remove(second);
      ActorTestKit third = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      SessionClient again =
          TensorCacheClient.create(third.system()).session(cache.cacheId(), "tiers-2", 0, 1, 5, 64);
      again.resumeFrom(1);
      for (int s = 1; s < 6; s++) {
        TrainingBatch step = again.next();
        if (s < 3) {
          assertArrayEquals(seen.get(s), step.indices(), "the same step " + s);
        }
        assertRows(reference, width, step.indices(), step.values().floats(FIELD));
      }
    }
  }

  /** Twenty steps of a session through the lookup port: after the first, all hot. */
  private static void portSession(
      ActorTestKit trainer, TestCache cache, float[] reference, int width, HotTier hot)
      throws Exception {
    InetSocketAddress endpoint = TensorCacheNode.get(trainer.system()).endpointAddress().get();
    try (Socket socket = new Socket(endpoint.getAddress(), endpoint.getPort())) {
      socket.setSoTimeout(40_000);
      var in = new BufferedInputStream(socket.getInputStream());
      var out = socket.getOutputStream();
      LookupFrames frames = new LookupFrames();
      byte[] id = cache.cacheId().getBytes(StandardCharsets.UTF_8);
      frames.send(
          SessionWire.encode(
              frames,
              LookupWire.VERSION_3,
              SessionWire.OPEN,
              id,
              new SessionWire.Args("tiers-port", 0, 1, 17, BATCH, -1)),
          out);
      assertEquals(0, LookupReplies.decodeStatus(frames.read(in), endpoint).getLong());
      TierStats.Snapshot before = null;
      for (long step = 0; step < 20; step++) {
        if (step == 1) {
          before = hot.stats(cache.cacheId()).snapshot();
        }
        frames.send(
            SessionWire.encode(
                frames,
                LookupWire.VERSION_3,
                SessionWire.NEXT,
                id,
                new SessionWire.Args("tiers-port", 0, 0, 0, 0, step)),
            out);
        ByteBuffer r = LookupReplies.decodeStatus(frames.read(in), endpoint);
        assertEquals(step, r.getLong());
        r.getLong(); // epoch
        long[] indices = new long[r.getInt()];
        for (int i = 0; i < indices.length; i++) {
          indices[i] = r.getLong();
        }
        Object[] values = {new float[indices.length * width]};
        LookupReplies.decodeValues(r, cache.spec, indices.length, values);
        assertRows(reference, width, indices, (float[]) values[0]);
        awaitPrefetched(
            trainer,
            LocalLookup.get(trainer.system()),
            TrainerSession.entityId("tiers-port", 0),
            step + 1);
      }
      TierStats.Snapshot after = hot.stats(cache.cacheId()).snapshot();
      assertEquals(19L * BATCH, after.hotHits() - before.hotHits(), "port steps hot: " + after);
      assertEquals(before.warmHits() + before.coldHits(), after.warmHits() + after.coldHits());
    }
  }

  /** Waits until the rows of {@code step} of the session are in the trainer node's memory. */
  private static void awaitPrefetched(
      ActorTestKit trainer, LocalLookup local, String sessionId, long step) {
    trainer
        .createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            Duration.ofMillis(5),
            () -> {
              assertTrue(local.isPrefetched(sessionId, step), "step " + step + " prefetched");
              return null;
            });
  }

  private static void assertRows(float[] reference, int width, long[] indices, float[] got) {
    for (int i = 0; i < indices.length; i++) {
      for (int k = 0; k < width; k++) {
        float want = reference[(int) indices[i] * width + k];
        float have = got[i * width + k];
        if (Float.floatToRawIntBits(want) != Float.floatToRawIntBits(have)) {
          throw new AssertionError(
              "index " + indices[i] + " element " + k + ": " + have + ", expected " + want);
        }
      }
    }
  }
}
