package org.tensorcache.store.objects;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectSegmentStore.Created;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowFixtures;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.testing.S3ProxyServer;

/** Segments in a real S3Proxy server: round trips, listings, checks, racing creates, copies. */
class ObjectSegmentStoreTest {
  private static final String BUCKET = "segments";

  /** 40 ranges of 50 examples: a scalar pair and a vector, like a cache of features. */
  private static final CacheSpec SPEC =
      new CacheSpec(
          "dpo-ref",
          2000,
          List.of(
              FieldSpec.scalar("chosen_logp"),
              FieldSpec.scalar("rejected_logp"),
              FieldSpec.vector("features", 3)),
          50);

  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir static Path serverDir;
  private static S3ProxyServer server;
  private static ObjectStorage storage;

  @TempDir Path dir;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3ProxyServer.start(serverDir);
    S3ProxyServer.useAsDefaultCredentials();
    storage =
        ObjectStorage.open(
            ObjectStoreSettings.defaults().withEndpoint(server.endpoint()).withListPageSize(3));
    storage.client().createBucket(b -> b.bucket(BUCKET));
  }

  @AfterAll
  static void stopServer() throws Exception {
    try {
      if (storage != null) {
        storage.close();
      }
    } finally {
      server.close();
    }
  }

  private ObjectSegmentStore<Block> store(String prefix, String node) throws IOException {
    return store(prefix, node, FP);
  }

  private ObjectSegmentStore<Block> store(String prefix, String node, Fingerprint fp)
      throws IOException {
    return storage.segments(
        ObjectLocation.parse("s3://" + BUCKET + "/" + prefix), dir.resolve(node), SPEC, fp);
  }

  private static Block complete(int range, long seed) {
    return Fixtures.block(SPEC, range, seed, 100);
  }

  private static byte[] segmentBytes(Block block, Fingerprint fp, Path scratch) throws IOException {
    Path file = scratch.resolve("segment-" + block.range());
    SegmentFile.write(file, block, fp);
    return Files.readAllBytes(file);
  }

  @Test
  void writtenBlocksReadBackEqualOnAnotherNode() throws IOException {
    ObjectSegmentStore<Block> writer = store("round-trip", "a");
    Block b1 = Fixtures.block(SPEC, 1, 1, 40);
    Block b3 = complete(3, 2);
    writer.write(b1);
    writer.write(b3);

    ObjectSegmentStore<Block> reader = store("round-trip", "b");
    assertEquals(Optional.of(b1), reader.read(1));
    assertEquals(Optional.of(b3), reader.read(3));
    assertEquals(Optional.empty(), reader.read(2));
    assertEquals(new TreeSet<>(Set.of(1, 3)), reader.persistedRanges());
    assertEquals("s3://segments/round-trip/range-000003.safetensors", reader.locationOf(3));
    assertArrayEquals(
        segmentBytes(b3, FP, dir), Files.readAllBytes(server.fileOf(BUCKET, writer.keyOf(3))));
    assertThrows(IndexOutOfBoundsException.class, () -> reader.read(40));
  }

  @Test
  void persistedRangesFollowsEveryPageOfTheListing() throws IOException {
    ObjectSegmentStore<Block> store = store("paged", "a");
    Set<Integer> written = new TreeSet<>(Set.of(0, 2, 5, 7, 11, 13, 17, 19, 23, 29, 31, 39));
    for (int r : written) {
      store.write(Fixtures.block(SPEC, r, r, 30));
    }
    // names that are not segments of this cache are listed too, and left out
    Path other = server.fileOf(BUCKET, "paged/range-3.safetensors");
    Files.write(other, new byte[] {1});
    Files.write(server.fileOf(BUCKET, "paged/range-000040.safetensors"), new byte[] {1});
    Files.write(server.fileOf(BUCKET, "paged/notes.txt"), new byte[] {1});
    // 15 keys in pages of 3
    assertEquals(written, store.persistedRanges());
  }

  @Test
  void truncatedObjectIsRejectedAndNotCopied() throws IOException {
    ObjectSegmentStore<Block> writer = store("truncated", "a");
    Block block = complete(4, 3);
    byte[] whole = segmentBytes(block, FP, dir);
    Files.createDirectories(server.fileOf(BUCKET, writer.keyOf(4)).getParent());
    Files.write(server.fileOf(BUCKET, writer.keyOf(4)), Arrays.copyOf(whole, whole.length - 9));

    ObjectSegmentStore<Block> reader = store("truncated", "b");
    SegmentRejectedException read =
        assertThrows(SegmentRejectedException.class, () -> reader.read(4));
    assertEquals(Reason.TRUNCATED, read.reason());
    assertEquals(reader.locationOf(4), read.source());
    assertTrue(
        read.getMessage().contains("s3://segments/truncated/range-000004"), read.getMessage());
    SegmentRejectedException copy =
        assertThrows(SegmentRejectedException.class, () -> reader.localCopy(4));
    assertEquals(Reason.TRUNCATED, copy.reason());
    assertEquals(List.of(), names(reader.localDirectory()));
  }

  @Test
  void objectOfAnotherFingerprintIsRejected() throws IOException {
    Fingerprint foreign = Fixtures.fingerprint(SPEC, "weights-sha256:ff00");
    store("foreign", "a", foreign).write(complete(6, 4));

    ObjectSegmentStore<Block> reader = store("foreign", "b");
    assertEquals(Set.of(6), reader.persistedRanges());
    SegmentRejectedException e = assertThrows(SegmentRejectedException.class, () -> reader.read(6));
    assertEquals(Reason.FOREIGN_FINGERPRINT, e.reason());
    assertEquals(List.of(), names(reader.localDirectory()));
  }

  @Test
  void racingCreatesOfARangeHaveOneWinnerAndTheOtherAccepts() throws Exception {
    ObjectSegmentStore<Block> first = store("race", "a");
    ObjectSegmentStore<Block> second = store("race", "b");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int r = 0; r < 10; r++) {
        Block block = complete(r, 100 + r);
        CyclicBarrier start = new CyclicBarrier(2);
        List<Future<Created>> outcomes = new ArrayList<>();
        for (ObjectSegmentStore s : List.of(first, second)) {
          outcomes.add(
              pool.submit(
                  () -> {
                    start.await();
                    return s.create(block.copy());
                  }));
        }
        List<Created> got = new ArrayList<>();
        for (Future<Created> f : outcomes) {
          got.add(f.get(60, TimeUnit.SECONDS));
        }
        assertEquals(1, got.stream().filter(c -> c == Created.CREATED).count(), "range " + r);
        assertEquals(1, got.stream().filter(c -> c == Created.ALREADY_THERE).count(), "range " + r);
        assertEquals(Optional.of(block), store("race", "c").read(r));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void createReportsAnExistingObjectThatIsNotTheSegmentAndLeavesItAlone() throws IOException {
    ObjectSegmentStore<Block> store = store("existing", "a");
    Block block = complete(8, 5);
    Path file = server.fileOf(BUCKET, store.keyOf(8));
    Files.createDirectories(file.getParent());

    byte[] whole = segmentBytes(block, FP, dir);
    byte[] shortened = Arrays.copyOf(whole, 100);
    Files.write(file, shortened);
    SegmentExistsException truncated =
        assertThrows(SegmentExistsException.class, () -> store.create(block));
    assertEquals(Reason.TRUNCATED, truncated.rejection().orElseThrow().reason());
    assertTrue(truncated.getMessage().contains(store.locationOf(8)), truncated.getMessage());
    assertArrayEquals(shortened, Files.readAllBytes(file));

    byte[] foreign = segmentBytes(block, Fixtures.fingerprint(SPEC, "weights-sha256:ff00"), dir);
    Files.write(file, foreign);
    SegmentExistsException other =
        assertThrows(SegmentExistsException.class, () -> store.create(block));
    assertEquals(Reason.FOREIGN_FINGERPRINT, other.rejection().orElseThrow().reason());
    assertArrayEquals(foreign, Files.readAllBytes(file));
  }

  @Test
  void writeReplacesADamagedOrForeignObjectButNotOneWithOtherValues() throws IOException {
    ObjectSegmentStore<Block> store = store("replace", "a");
    Block block = complete(8, 5);
    Path file = server.fileOf(BUCKET, store.keyOf(8));
    Files.createDirectories(file.getParent());
    byte[] whole = segmentBytes(block, FP, dir);

    for (byte[] damaged :
        List.of(
            Arrays.copyOf(whole, 100),
            segmentBytes(block, Fixtures.fingerprint(SPEC, "weights-sha256:ff00"), dir))) {
      Files.write(file, damaged);
      store.write(block);
      assertArrayEquals(whole, Files.readAllBytes(file));
      assertEquals(Optional.of(block), store("replace", "b").read(8));
    }

    Block partial = Fixtures.block(SPEC, 8, 5, 60);
    byte[] valid = segmentBytes(partial, FP, dir);
    Files.write(file, valid);
    ObjectSegmentStore<Block> fresh = store("replace", "c");
    SegmentExistsException different =
        assertThrows(SegmentExistsException.class, () -> fresh.write(block));
    assertEquals(Optional.of(partial), different.existing());
    assertArrayEquals(valid, Files.readAllBytes(file));
    assertFalse(Files.exists(fresh.localDirectory().resolve("range-000008.safetensors")));
  }

  @Test
  void rowsOfAPerTokenCacheRoundTripAndAreCheckedAsBlocksAre() throws IOException {
    CacheSpec teacher = RowFixtures.teacherSpec(false);
    Fingerprint fp = Fixtures.fingerprint(teacher);
    ObjectLocation at = ObjectLocation.parse("s3://" + BUCKET + "/rows");
    ObjectSegmentStore<RowBlock> writer =
        storage.segments(SegmentCodec.ROWS, at, dir.resolve("a"), teacher, fp);
    RowBlock rows = RowFixtures.rows(teacher, 1, 7, 70);
    writer.write(rows);
    ObjectSegmentStore<RowBlock> reader =
        storage.segments(SegmentCodec.ROWS, at, dir.resolve("b"), teacher, fp);
    assertEquals(Optional.of(rows), reader.read(1));
    assertEquals(Set.of(1), reader.persistedRanges());
    assertEquals(Created.ALREADY_THERE, reader.create(rows));

    RowBlock other = RowFixtures.rows(teacher, 1, 8, 70);
    SegmentExistsException different =
        assertThrows(SegmentExistsException.class, () -> reader.create(other));
    assertEquals(Optional.of(rows), different.existing());

    Path file = server.fileOf(BUCKET, writer.keyOf(1));
    Files.write(file, Arrays.copyOf(Files.readAllBytes(file), 200));
    ObjectSegmentStore<RowBlock> third =
        storage.segments(SegmentCodec.ROWS, at, dir.resolve("c"), teacher, fp);
    SegmentRejectedException truncated =
        assertThrows(SegmentRejectedException.class, () -> third.read(1));
    assertEquals(Reason.TRUNCATED, truncated.reason());
    var wrongKind =
        assertThrows(
            IllegalArgumentException.class,
            () -> storage.segments(SegmentCodec.ROWS, at, dir.resolve("d"), SPEC, FP));
    assertTrue(wrongKind.getMessage().contains("per-token fields only"), wrongKind.getMessage());
  }

  @Test
  void localCopyIsDownloadedOnceReusedAndReplacedWhenDamaged() throws IOException {
    Block block = complete(9, 6);
    ObjectSegmentStore<Block> writer = store("copies", "a");
    writer.write(block);
    ObjectSegmentStore<Block> reader = store("copies", "b");
    assertEquals(Optional.empty(), reader.localCopy(10));

    Path copy = reader.localCopy(9).orElseThrow();
    assertEquals(reader.localDirectory().resolve("range-000009.safetensors"), copy);
    assertEquals(block, SegmentFile.read(copy, SPEC, FP, 9));

    byte[] damaged = Files.readAllBytes(copy);
    damaged[damaged.length - 20] ^= 0x10;
    Files.write(copy, damaged);
    assertEquals(copy, reader.localCopy(9).orElseThrow());
    assertNotEquals(-1, Arrays.mismatch(damaged, Files.readAllBytes(copy)));
    assertEquals(block, SegmentFile.read(copy, SPEC, FP, 9));

    // with the object gone, only a reused copy can answer
    storage.client().deleteObject(d -> d.bucket(BUCKET).key(writer.keyOf(9)));
    assertEquals(Optional.empty(), store("copies", "c").read(9));
    assertEquals(copy, reader.localCopy(9).orElseThrow());
    assertEquals(block, SegmentFile.read(copy, SPEC, FP, 9));
    assertEquals(List.of("range-000009.safetensors"), names(reader.localDirectory()));
  }

  @Test
  void missingBucketIsAClearErrorNotAnEmptyStore() throws IOException {
    ObjectSegmentStore<Block> store =
        storage.segments(ObjectLocation.parse("s3://no-such-bucket/x"), dir.resolve("a"), SPEC, FP);
    ObjectStorageException e =
        assertThrows(ObjectStorageException.class, () -> store.persistedRanges());
    assertFalse(e instanceof ObjectStorageUnavailableException, e.toString());
    assertTrue(e.getMessage().contains("404"), e.getMessage());
    assertThrows(ObjectStorageException.class, () -> store.write(complete(0, 1)));
    assertThrows(ObjectStorageException.class, () -> store.read(0));
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
