package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.ByRows;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.testing.TestCluster;
import org.tensorcache.fields.RaggedValues;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.usermodel.TeacherModel;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.TokenCoding;
import org.tensorcache.store.tier.Tier;

/**
 * A distillation teacher's per-token cache in a cluster of a compute node and a lookup node: rows
 * looked up before the fill are computed by their shard, the fill writes segments holding the same
 * rows, later lookups read the segments and then memory, and a restarted cluster serves every row
 * from the segments without computing one again.
 */
class PerTokenCacheTest {
  private static final Path BYO = Path.of("../model-runner/src/test/resources/byo");
  private static TeacherModel teacher;
  private static ExampleSet rows;
  private static ExampleSet raw;

  @TempDir Path dir;

  @BeforeAll
  static void open() throws Exception {
    teacher =
        TeacherModel.open(
            BYO.resolve("gpt2-split"),
            5,
            0.7f,
            new Truncation(0, Truncation.Mode.KEEP_START),
            BudgetSettings.DEFAULT);
    raw = ExampleSet.load(BYO.resolve("data/completion.jsonl"), DataFormat.COMPLETION);
    rows = teacher.prepare(raw);
  }

  @AfterAll
  static void close() {
    teacher.close();
  }

  private CacheDefinition definition() throws Exception {
    CacheSpec spec =
        CacheSpec.teacher(
            "teacher", rows.size(), 3, new TokenCoding.TopK(teacher.vocab(), 5, false));
    return CacheDefinition.perToken(
        spec,
        CacheDefinition.fingerprint(teacher.identity(raw.format()), raw, spec),
        rows,
        () -> newRunner(),
        dir.resolve("segments"),
        teacher.planner(),
        java.util.Map.of());
  }

  private static org.tensorcache.model.runner.TokenRunner newRunner() {
    try {
      return teacher.newRunner(DataFormat.COMPLETION);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void rowsComeFromTheShardThenTheSegmentsThenMemoryAndSurviveARestart() throws Exception {
    CacheDefinition cache = definition();
    long[] asked = {11, 0, 7, 7, 3};
    RaggedValues before;
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(cache))) {
      ActorTestKit compute = cluster.add("\"compute\"");
      ActorTestKit trainer = cluster.add("\"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      LocalLookup lookup = LocalLookup.get(trainer.system());
      TensorCacheNode node = TensorCacheNode.get(trainer.system());
      assertTrue(node.replication(cache.cacheId()) instanceof ByRows);

      before = lookup.lookupRows(cache.cacheId(), asked); // nothing filled: the shards compute
      assertEquals(5, node.rowTier().stats(cache.cacheId()).snapshot().hits(Tier.COLD));
      Fills.fill(compute, cluster.coordinators.get(0), cache.cacheId(), Duration.ofSeconds(120));
      assertEquals(rows.size(), TensorCacheNode.get(compute.system()).computedExamples());

      SegmentStore<RowBlock> segments =
          SegmentStore.at(
              SegmentCodec.ROWS, dir.resolve("segments"), cache.spec(), cache.fingerprint());
      assertEquals(cache.spec().rangeCount(), segments.persistedRanges().size());
      assertSameValues(expected(segments, cache.spec(), asked), before);

      assertSameValues(before, lookup.lookupRows(cache.cacheId(), asked)); // from the segments
      assertSameValues(before, lookup.lookupRows(cache.cacheId(), asked)); // from memory
      var stats = node.rowTier().stats(cache.cacheId()).snapshot();
      assertTrue(stats.hits(Tier.WARM) >= 1 && stats.hits(Tier.HOT) >= 5, stats.toString());

      var refused =
          assertThrows(
              IllegalArgumentException.class,
              () -> lookup.lookupRows(cache.cacheId(), new long[] {0, rows.size()}));
      assertEquals(
          "index 12 at position 1 is out of range for cache '"
              + cache.cacheId()
              + "', expected 0..11",
          refused.getMessage());
    }

    try (TestCluster restarted = new TestCluster(dir.resolve("node"), List.of(definition()))) {
      ActorTestKit compute = restarted.add("\"compute\"");
      restarted.awaitUp(Duration.ofSeconds(30));
      Fills.fill(compute, restarted.coordinators.get(0), cache.cacheId(), Duration.ofSeconds(60));
      assertSameValues(
          before, LocalLookup.get(compute.system()).lookupRows(cache.cacheId(), asked));
      assertEquals(
          0, TensorCacheNode.get(compute.system()).computedExamples(), "nothing computed again");
    }
  }

  private static RaggedValues expected(
      SegmentStore<RowBlock> segments, CacheSpec spec, long[] indices) throws Exception {
    int[] tokens = new int[indices.length];
    byte[][] bytes = new byte[indices.length][];
    for (int i = 0; i < indices.length; i++) {
      RowBlock r = segments.read(spec.rangeOf(indices[i])).orElseThrow();
      tokens[i] = r.tokens(indices[i]);
      bytes[i] = r.row(indices[i]);
    }
    return org.tensorcache.actors.lookup.RowLookup.decode(spec, tokens, bytes);
  }

  private static void assertSameValues(RaggedValues expected, RaggedValues actual) {
    assertArrayEquals(expected.offsets(), actual.offsets());
    assertArrayEquals((int[]) expected.values()[0], (int[]) actual.values()[0]);
    assertArrayEquals((float[]) expected.values()[1], (float[]) actual.values()[1]);
    assertArrayEquals((float[]) expected.values()[2], (float[]) actual.values()[2]);
  }
}
