package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** Mapped segments of every dtype read as the blocks they were written from, or are rejected. */
class MappedSegmentTest {
  static final CacheSpec SPEC =
      new CacheSpec(
          "typed",
          150,
          List.of(
              new FieldSpec("f", DType.F32, new int[0]),
              new FieldSpec("h", DType.F16, new int[] {3}),
              new FieldSpec("b", DType.BF16, new int[] {2}),
              new FieldSpec("i", DType.I32, new int[0]),
              new FieldSpec("l", DType.I64, new int[] {2})),
          64);
  static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir Path dir;

  /** A block of about 60% present examples, every dtype holding values of its own kind. */
  static Block block(int range, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Block b = Block.empty(SPEC, range);
    for (long i = b.start(); i < b.start() + b.length(); i++) {
      if (random.nextInt(100) < 60) {
        float[][] row = new float[SPEC.fields().size()][];
        for (int f = 0; f < row.length; f++) {
          FieldSpec field = SPEC.fields().get(f);
          row[f] = new float[field.width()];
          for (int k = 0; k < row[f].length; k++) {
            row[f][k] =
                field.dtype().isFloating()
                    ? (random.nextInt(5) == 0
                        ? Fixtures.SPECIAL[random.nextInt(Fixtures.SPECIAL.length)]
                        : (float) (random.nextDouble() * 20 - 10))
                    : random.nextInt(2_000_001) - 1_000_000;
          }
        }
        b.put(i, row);
      }
    }
    return b;
  }

  Path written(Block b) throws IOException {
    Path file = dir.resolve("r" + b.range() + ".safetensors");
    SegmentFile.write(file, b, FP);
    return file;
  }

  static Object[] rowArrays(int rows) {
    Object[] out = new Object[SPEC.fields().size()];
    for (int f = 0; f < out.length; f++) {
      FieldSpec field = SPEC.fields().get(f);
      out[f] = field.dtype().newArray(rows * field.width());
    }
    return out;
  }

  @Test
  void everyDtypeGathersAsTheBlockDoesAndBuildsTheBlockReadWould() throws IOException {
    // one mapping, and chunks of a few rows each (up to one row per mapping)
    for (long chunk : new long[] {MappedSegment.MAX_CHUNK_BYTES, 64, 1}) {
      for (int r = 0; r < SPEC.rangeCount(); r++) {
        Block b = block(r, 10 + r);
        Path file = written(b);
        try (MappedSegment m = MappedSegment.open(file, SPEC, FP, r, chunk)) {
          assertEquals(b.presentCount(), m.presentCount());
          Object[] fromBlock = rowArrays(b.length());
          Object[] fromMap = rowArrays(b.length());
          long[] indices = new long[b.length()];
          for (int i = 0; i < b.length(); i++) {
            long index = b.start() + b.length() - 1 - i; // backwards: positions differ from rows
            indices[i] = index;
            assertEquals(b.isPresent(index), m.isPresent(index), "index " + index);
            assertEquals(b.gather(index, fromBlock, i), m.gather(index, fromMap, i));
          }
          for (int f = 0; f < fromBlock.length; f++) {
            assertTrue(
                FieldArrays.equal(fromBlock[f], fromMap[f]), "field " + f + " chunk " + chunk);
          }
          Object[] batch = rowArrays(b.length());
          int[] missing = m.gather(indices, batch);
          assertEquals(b.length() - b.presentCount(), missing.length);
          for (int p : missing) {
            assertFalse(b.isPresent(indices[p]));
          }
          assertEquals(SegmentFile.read(file, SPEC, FP, r), m.toBlock());
          assertEquals(b, m.toBlock());
          if (chunk == MappedSegment.MAX_CHUNK_BYTES) {
            assertEquals(Files.size(file), m.mappedBytes());
          }
        }
      }
    }
  }

  @Test
  void damagedAndForeignSegmentsAreRejectedForTheReasonsReadGives() throws IOException {
    Path file = written(block(1, 7));
    byte[] bytes = Files.readAllBytes(file);
    int dataStart = 8 + (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();

    assertEquals(Reason.BAD_CHECKSUM, rejection(file, flip(bytes, dataStart + 100), 1));
    assertEquals(Reason.BAD_CHECKSUM, rejection(file, flip(bytes, bytes.length - 2), 1));
    for (int cut : new int[] {0, 7, dataStart / 2, dataStart, bytes.length - 1}) {
      assertEquals(Reason.TRUNCATED, rejection(file, Arrays.copyOf(bytes, cut), 1), "cut " + cut);
    }
    assertEquals(Reason.OVERSIZED, rejection(file, Arrays.copyOf(bytes, bytes.length + 1), 1));
    assertEquals(Reason.WRONG_RANGE, rejection(file, bytes, 0));

    Files.write(file, bytes);
    Fingerprint other = Fixtures.fingerprint(SPEC, "weights-sha256:other");
    var e =
        assertThrows(
            SegmentRejectedException.class, () -> MappedSegment.open(file, SPEC, other, 1));
    assertEquals(Reason.FOREIGN_FINGERPRINT, e.reason());
    assertTrue(e.getMessage().contains(other.hex()) && e.getMessage().contains(file.toString()));

    // every flipped header byte: rejected, for the reason the streaming read gives; the mapping
    // whole and in chunks take turns
    for (int i = 0; i < dataStart; i++) {
      Files.write(file, flip(bytes, i));
      sameRejection(file, 1, i % 2 == 0 ? MappedSegment.MAX_CHUNK_BYTES : 64);
    }
  }

  /**
   * The value scan is the one check a mapping skips: a NaN forged with a checksum to match is
   * accepted by open and rejected by toBlock, which builds a block.
   */
  @Test
  void aForgedNaNIsRejectedWhenTheBlockIsBuilt() throws IOException {
    Block b = Block.empty(SPEC, 0);
    b.put(0, new float[][] {{1f}, {1f, 2f, 3f}, {4f, 5f}, {6f}, {7f, 8f}});
    Path file = written(b);
    byte[] bytes = Files.readAllBytes(file);
    int n = (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    ByteBuffer.wrap(bytes, 8 + n, 4).order(ByteOrder.LITTLE_ENDIAN).putFloat(Float.NaN);
    CRC32C crc = new CRC32C();
    crc.update(bytes, 8 + n, bytes.length - 8 - n);
    String header = new String(bytes, 8, n, StandardCharsets.US_ASCII);
    String fixed =
        header.replaceFirst(
            "\"crc32c\":\"[0-9a-f]{8}\"",
            "\"crc32c\":\"" + String.format("%08x", (int) crc.getValue()) + "\"");
    System.arraycopy(fixed.getBytes(StandardCharsets.US_ASCII), 0, bytes, 8, n);
    Files.write(file, bytes);
    try (MappedSegment m = MappedSegment.open(file, SPEC, FP, 0)) {
      var e = assertThrows(SegmentRejectedException.class, m::toBlock);
      assertEquals(Reason.BAD_VALUE, e.reason(), e.getMessage());
    }
  }

  @Test
  void usesAfterCloseAndIndicesOutsideTheRangeThrow() throws IOException {
    Block b = block(2, 3);
    MappedSegment m = MappedSegment.open(written(b), SPEC, FP, 2);
    var e = assertThrows(IndexOutOfBoundsException.class, () -> m.isPresent(10));
    assertEquals("index 10 out of range [128, 150) of range 2 of cache 'typed'", e.getMessage());
    m.close();
    assertThrows(IllegalStateException.class, () -> m.gather(130, rowArrays(1), 0));
  }

  /** Writes {@code bytes} to {@code file}; both readers must reject it, for the same reason. */
  private static Reason rejection(Path file, byte[] bytes, int range) throws IOException {
    Files.write(file, bytes);
    sameRejection(file, range, MappedSegment.MAX_CHUNK_BYTES);
    return sameRejection(file, range, 64);
  }

  /** Opening {@code file} mapped in chunks of {@code chunk} fails as reading it does. */
  private static Reason sameRejection(Path file, int range, long chunk) {
    var mapped =
        assertThrows(
            SegmentRejectedException.class, () -> MappedSegment.open(file, SPEC, FP, range, chunk));
    var read =
        assertThrows(SegmentRejectedException.class, () -> SegmentFile.read(file, SPEC, FP, range));
    assertEquals(read.getMessage(), mapped.getMessage());
    return mapped.reason();
  }

  private static byte[] flip(byte[] bytes, int at) {
    byte[] copy = bytes.clone();
    copy[at] ^= 0x01;
    return copy;
  }
}
