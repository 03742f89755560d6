package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectSegmentStore;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/** {@code --segments}, {@code --s3-endpoint} and {@code --s3-region}: checked, then applied. */
class SegmentPlaceTest {
  @TempDir Path dir;

  @Test
  void malformedOrMisplacedValuesAreRefusedNamingThem() {
    assertMessage(
        "--s3-endpoint http://h:9000 given with no --segments", null, "http://h:9000", null);
    assertMessage(
        "--s3-region eu-west-1 given with --segments /shared", "/shared", null, "eu-west-1");
    assertMessage("bucket 'Bad_Bucket'", "s3://Bad_Bucket/x", null, null);
    assertMessage(
        "'ftp://h' expected to be http(s)://host[:port]", "s3://good-bucket", "ftp://h", null);
    assertMessage("--segments '' expected", " ", null, null);
  }

  @Test
  void theDefaultKeepsSegmentsBesideTheCacheAndADirectoryKeepsThemUnderTheCacheId()
      throws IOException {
    CacheDefinition cache = cache(dir.resolve("data/c/segments"));
    assertEquals(cache, SegmentPlace.of(null, null, null).apply(cache));
    CacheDefinition shared =
        SegmentPlace.of(dir.resolve("shared").toString(), null, null).apply(cache);
    Path expected = dir.resolve("shared").resolve(cache.cacheId());
    assertEquals(expected, shared.segmentDir());
    assertTrue(shared.segments() instanceof SegmentStore s && s.directory().equals(expected));
  }

  @Test
  void objectStorageKeepsEachCacheUnderItsIdWithLocalCopiesBesideTheCache() throws IOException {
    CacheDefinition cache = cache(dir.resolve("data/c/segments"));
    SegmentPlace place = SegmentPlace.of("s3://my-bucket/runs", "http://127.0.0.1:1", "eu-west-1");
    assertTrue(place.isObjectStorage());
    CacheDefinition remote = place.apply(cache);
    ObjectSegmentStore<Block> store = (ObjectSegmentStore<Block>) remote.segments();
    assertEquals("s3://my-bucket/runs/" + cache.cacheId() + "/", store.location().toString());
    assertEquals(cache.segmentDir(), store.localDirectory());
    assertEquals("eu-west-1", store.storage().settings().region());
    assertFalse(SegmentPlace.of(null, null, null).isObjectStorage());
  }

  private static void assertMessage(String part, String location, String endpoint, String region) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> SegmentPlace.of(location, endpoint, region));
    assertTrue(e.getMessage().contains(part), e.getMessage());
  }

  private static CacheDefinition cache(Path segmentDir) {
    CacheSpec spec = new CacheSpec("c", 4, List.of(FieldSpec.scalar("v")), 2);
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("r", "1", "w", "d", Map.of(), spec));
    ExampleSet data =
        new ExampleSet(
            segmentDir,
            List.of(
                new PreferenceExample(0, "a", "b", "c"),
                new PreferenceExample(1, "a", "b", "c"),
                new PreferenceExample(2, "a", "b", "c"),
                new PreferenceExample(3, "a", "b", "c")),
            "digest");
    return new CacheDefinition(spec, fp, data, () -> null, segmentDir, BatchPlanner.fixed(2));
  }
}
