package org.tensorcache.store.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowFixtures;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

class SegmentStoreTest {
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir Path dir;

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void writesAndReadsRowsOfAPerTokenCacheByRange() throws IOException {
    CacheSpec teacher = RowFixtures.teacherSpec(true);
    Fingerprint fp = Fixtures.fingerprint(teacher);
    SegmentStore<RowBlock> store =
        SegmentStore.open(SegmentCodec.ROWS, dir.resolve("teacher"), teacher, fp);
    assertEquals(Optional.empty(), store.read(2));
    RowBlock rows = RowFixtures.rows(teacher, 2, 9, 50);
    store.write(rows);
    assertEquals(Optional.of(rows), store.read(2));
    assertEquals(Set.of(2), store.persistedRanges());
    assertEquals(List.of("range-000002.safetensors"), names(dir.resolve("teacher")));
    var blocksOfRows =
        assertThrows(
            IllegalArgumentException.class, () -> SegmentStore.open(dir.resolve("x"), teacher, fp));
    assertTrue(blocksOfRows.getMessage().contains("is per-token"), blocksOfRows.getMessage());
  }

  @Test
  void writesAndReadsBlocksByRange() throws IOException {
    SegmentStore<Block> store = SegmentStore.open(dir.resolve("cache"), SPEC, FP);
    assertEquals(Optional.empty(), store.read(1));
    Block b1 = Fixtures.block(SPEC, 1, 1, 40);
    Block b3 = Fixtures.block(SPEC, 3, 2, 90);
    store.write(b1);
    store.write(b3);
    assertEquals(Optional.of(b1), store.read(1));
    assertEquals(Optional.of(b3), store.read(3));
    assertEquals(new TreeSet<>(Set.of(1, 3)), store.persistedRanges());
    assertEquals(
        List.of("range-000001.safetensors", "range-000003.safetensors"), names(store.directory()));

    Block merged = b1.merge(Fixtures.block(SPEC, 1, 3, 40));
    store.write(merged);
    assertEquals(Optional.of(merged), store.read(1));
  }

  @Test
  void localCopyIsTheSegmentFileItself() throws IOException {
    Segments<Block> segments = SegmentStore.open(dir, SPEC, FP);
    assertEquals(Optional.empty(), segments.localCopy(2));
    segments.write(Fixtures.block(SPEC, 2, 5, 70));
    assertEquals(Optional.of(dir.resolve("range-000002.safetensors")), segments.localCopy(2));
    assertEquals(dir.resolve("range-000002.safetensors").toString(), segments.locationOf(2));
    assertThrows(IndexOutOfBoundsException.class, () -> segments.localCopy(4));
  }

  @Test
  void leftoverTemporaryFilesAreDeletedOnOpen() throws IOException {
    SegmentStore<Block> store = SegmentStore.open(dir, SPEC, FP);
    store.write(Fixtures.block(SPEC, 0, 4, 50));
    Files.write(dir.resolve(".tmp-range-000002.safetensors-1f2e"), new byte[] {1, 2, 3});
    Files.write(dir.resolve(".tmp-range-000000.safetensors-99"), new byte[0]);
    SegmentStore<Block> reopened = SegmentStore.open(dir, SPEC, FP);
    assertEquals(List.of("range-000000.safetensors"), names(dir));
    assertTrue(reopened.read(0).isPresent());
  }

  @Test
  void aRejectedFileLeavesTheStoreUnchanged() throws IOException {
    SegmentStore<Block> store = SegmentStore.open(dir, SPEC, FP);
    Block good = Fixtures.block(SPEC, 0, 5, 50);
    store.write(good);
    store.write(Fixtures.block(SPEC, 2, 6, 50));
    Path bad = store.pathOf(2);
    byte[] bytes = Files.readAllBytes(bad);
    bytes[bytes.length - 3] ^= 0x01;
    Files.write(bad, bytes);

    assertThrows(SegmentRejectedException.class, () -> store.read(2));
    assertThrows(SegmentRejectedException.class, () -> store.read(2));
    assertArrayEquals(bytes, Files.readAllBytes(bad));
    assertEquals(Optional.of(good), store.read(0));
    assertEquals(new TreeSet<>(Set.of(0, 2)), store.persistedRanges());
  }

  @Test
  void aBlockOfAnotherSpecIsNotWritten() throws IOException {
    SegmentStore<Block> store = SegmentStore.open(dir, SPEC, FP);
    CacheSpec other = new CacheSpec("dpo-ref", 1000, List.of(FieldSpec.scalar("x")), 300);
    assertThrows(IllegalArgumentException.class, () -> store.write(Block.empty(other, 0)));
    assertFalse(Files.exists(store.pathOf(0)));
    assertEquals(List.of(), names(dir));
  }

  @Test
  void persistedRangesIgnoresOtherNames() throws IOException {
    SegmentStore<Block> store = SegmentStore.open(dir, SPEC, FP);
    Files.write(dir.resolve("range-1.safetensors"), new byte[0]);
    Files.write(dir.resolve("range-000009.safetensors"), new byte[0]);
    Files.write(dir.resolve("notes.txt"), new byte[0]);
    Files.write(dir.resolve("range-000002.safetensors"), new byte[0]);
    assertEquals(new TreeSet<>(Set.of(2)), store.persistedRanges());
  }
}
