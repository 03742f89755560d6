package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorcache.actors.cache.ByReference;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.segment.SegmentStore;

/**
 * Segment writes that fail while a fill runs (here the segment directory is a plain file, so every
 * write fails, as on a full disk) are tried again after a backoff: once writes work again the fill
 * completes, every range from a verified segment, and nothing is computed twice.
 */
class SegmentWriteRetryTest {
  private static final int EXAMPLES = 640;

  @TempDir Path dir;

  /** Gossiped ranges are written by the coordinator, ranges by reference by their shards. */
  @ParameterizedTest(name = "by reference: {0}")
  @ValueSource(booleans = {false, true})
  void failedWritesAreWrittenLaterAndTheFillCompletes(boolean byReference) throws Exception {
    TestCache cache = new TestCache(dir, EXAMPLES, 128, true);
    String config =
        "pekko.actor.testkit.typed.filter-leeway = 30s\n"
            + (byReference
                ? "tensorcache.replication.gossip-budget = 4 KiB"
                : "tensorcache.replication.gossip-budget = 64 KiB");
    Path segments = cache.definition().segmentDir();
    try (TestCluster cluster =
        new TestCluster(dir.resolve("node"), List.of(cache.definition()), config)) {
      ActorTestKit compute = cluster.add("\"compute\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      assertEquals(
          byReference,
          (TensorCacheNode.get(compute.system()).replication(cache.cacheId())
              instanceof ByReference));
      cache.gate.close();
      ClusterFillTest.startFill(cluster, cache);
      cache.gate.awaitHeld(1, Duration.ofSeconds(60)); // restored, shards loaded, computing
      Files.deleteIfExists(segments); // the first segment write makes the directory
      Files.writeString(segments, "not a directory"); // every segment write fails from here on
      LoggingTestKit.error("not written")
          .withCheckExcess(false)
          .expect(
              compute.system(),
              () -> {
                cache.gate.open();
                return null;
              });
      Files.delete(segments);
      Files.createDirectories(segments); // writes work again
      ClusterFillTest.awaitPersisted(cluster, cache, Duration.ofSeconds(60));
    }
    assertEquals(EXAMPLES, cache.computedExamples.get(), "every example computed exactly once");
    SegmentStore<Block> store = SegmentStore.open(segments, cache.spec, cache.fingerprint);
    for (int r = 0; r < cache.spec.rangeCount(); r++) {
      int range = r;
      assertTrue(
          store
              .read(r)
              .orElseThrow(() -> new AssertionError("no segment of range " + range))
              .isComplete(),
          "segment of range " + r + " complete");
    }
    try (var temps = Files.newDirectoryStream(segments, AtomicFiles.TEMP_PREFIX + "*")) {
      assertTrue(!temps.iterator().hasNext(), "no temporary file left in " + segments);
    }
  }
}
