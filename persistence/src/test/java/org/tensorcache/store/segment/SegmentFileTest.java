package org.tensorcache.store.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

class SegmentFileTest {
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir Path dir;

  private Path written(Block block) throws IOException {
    Path file = dir.resolve(SegmentStore.fileName(block.range()));
    SegmentFile.write(file, block, FP);
    return file;
  }

  private Reason rejection(Path file, int range) {
    var e =
        assertThrows(SegmentRejectedException.class, () -> SegmentFile.read(file, SPEC, FP, range));
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    return e.reason();
  }

  private static int headerLength(byte[] bytes) {
    return (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  @Test
  void roundTripsPartialCompleteAndEmptyBlocks() throws IOException {
    for (Block b :
        new Block[] {
          Fixtures.block(SPEC, 0, 1, 60),
          Fixtures.block(SPEC, 3, 2, 100),
          Block.empty(SPEC, 2),
          Fixtures.block(SPEC, 1, 3, 3)
        }) {
      assertEquals(b, SegmentFile.read(written(b), SPEC, FP, b.range()));
    }
  }

  /** The in-memory codec is the file's: the same bytes, the same checks on reading. */
  @Test
  void encodeGivesTheFileBytesAndDecodeChecksThem() throws IOException {
    for (Block b : new Block[] {Fixtures.block(SPEC, 1, 3, 60), Block.empty(SPEC, 2)}) {
      byte[] bytes = SegmentFile.encode(b, FP);
      assertArrayEquals(Files.readAllBytes(written(b)), bytes);
      assertEquals(b, SegmentFile.decode(bytes, SPEC, FP, b.range()));
    }
    byte[] bytes = SegmentFile.encode(Fixtures.block(SPEC, 0, 7, 50), FP);
    bytes[bytes.length - 1] ^= 0x01;
    var e =
        assertThrows(SegmentRejectedException.class, () -> SegmentFile.decode(bytes, SPEC, FP, 0));
    assertEquals(Reason.BAD_CHECKSUM, e.reason(), e.getMessage());
    byte[] cut = Arrays.copyOf(bytes, bytes.length - 3);
    e = assertThrows(SegmentRejectedException.class, () -> SegmentFile.decode(cut, SPEC, FP, 0));
    assertEquals(Reason.TRUNCATED, e.reason(), e.getMessage());
  }

  /** Files over a few MiB are streamed rather than read whole: the same checks hold. */
  @Test
  void largeSegmentsRoundTripAndDamageIsRejected() throws IOException {
    CacheSpec big =
        new CacheSpec(
            SPEC.name(),
            8192,
            java.util.List.of(org.tensorcache.fields.FieldSpec.vector("features", 300)),
            4096);
    Fingerprint fp = Fixtures.fingerprint(big);
    Block block = Fixtures.block(big, 1, 6, 90);
    Path file = dir.resolve("big.safetensors");
    SegmentFile.write(file, block, fp);
    assertTrue(Files.size(file) > 4 << 20, "bigger than what is read whole");
    assertEquals(block, SegmentFile.read(file, big, fp, 1));

    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 5000] ^= 1;
    Files.write(file, bytes);
    var e = assertThrows(SegmentRejectedException.class, () -> SegmentFile.read(file, big, fp, 1));
    assertEquals(Reason.BAD_CHECKSUM, e.reason(), e.getMessage());
    Files.write(file, Arrays.copyOf(bytes, bytes.length - 3));
    e = assertThrows(SegmentRejectedException.class, () -> SegmentFile.read(file, big, fp, 1));
    assertEquals(Reason.TRUNCATED, e.reason(), e.getMessage());
  }

  @Test
  void theFileIsSafetensorsWithAPaddedHeader() throws IOException {
    byte[] bytes = Files.readAllBytes(written(Fixtures.block(SPEC, 3, 4, 50)));
    int n = headerLength(bytes);
    assertEquals(0, n % 8);
    String header = new String(bytes, 8, n, StandardCharsets.UTF_8);
    assertTrue(
        header.startsWith("{\"__metadata__\":{\"format\":\"tensorcache-segment/1\""), header);
    assertTrue(header.contains("\"features\":{\"dtype\":\"F32\",\"shape\":[100,3],"), header);
    assertTrue(header.contains("\"__present__\":{\"dtype\":\"U8\",\"shape\":[13],"), header);
    assertEquals(8 + n + 100 * 5 * 4 + 13, bytes.length);
  }

  @Test
  void truncatedFilesAreRejected() throws IOException {
    Path file = written(Fixtures.block(SPEC, 1, 5, 70));
    byte[] bytes = Files.readAllBytes(file);
    int n = headerLength(bytes);
    for (int cut : new int[] {0, 4, 7, 8, 8 + n / 2, 8 + n, 8 + n + 601, bytes.length - 1}) {
      Files.write(file, Arrays.copyOf(bytes, cut));
      assertEquals(Reason.TRUNCATED, rejection(file, 1), "cut at " + cut);
    }
  }

  @Test
  void anExtraByteIsRejected() throws IOException {
    Path file = written(Fixtures.block(SPEC, 1, 5, 70));
    byte[] bytes = Files.readAllBytes(file);
    Files.write(file, Arrays.copyOf(bytes, bytes.length + 1));
    assertEquals(Reason.OVERSIZED, rejection(file, 1));
  }

  @Test
  void everySingleFlippedHeaderByteIsRejected() throws IOException {
    Path file = written(Fixtures.block(SPEC, 3, 6, 40));
    byte[] bytes = Files.readAllBytes(file);
    int end = 8 + headerLength(bytes);
    for (int i = 0; i < end; i++) {
      byte[] flipped = bytes.clone();
      flipped[i] ^= 0x01;
      Files.write(file, flipped);
      try {
        Block b = SegmentFile.read(file, SPEC, FP, 3);
        fail("flipping byte " + i + " ('" + (char) bytes[i] + "') was accepted: " + b);
      } catch (SegmentRejectedException expected) {
        // each flip must be caught by a check, not by some other exception
      }
    }
  }

  @Test
  void aFlippedDataByteFailsTheChecksum() throws IOException {
    Path file = written(Fixtures.block(SPEC, 0, 7, 50));
    byte[] bytes = Files.readAllBytes(file);
    int dataStart = 8 + headerLength(bytes);
    for (int i : new int[] {dataStart, dataStart + 1234, bytes.length - 1}) {
      byte[] flipped = bytes.clone();
      flipped[i] ^= 0x01;
      Files.write(file, flipped);
      assertEquals(Reason.BAD_CHECKSUM, rejection(file, 0), "byte " + i);
    }
  }

  @Test
  void aNaNWithAMatchingChecksumIsStillRejected() throws IOException {
    Block b = Block.empty(SPEC, 0);
    b.put(0, new float[][] {{1f}, {2f}, {3f, 4f, 5f}});
    Path file = written(b);
    byte[] bytes = Files.readAllBytes(file);
    int n = headerLength(bytes);
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
    assertEquals(Reason.BAD_VALUE, rejection(file, 0));
  }

  @Test
  void aSegmentOfAnotherFingerprintIsForeign() throws IOException {
    Path file = written(Fixtures.block(SPEC, 2, 8, 50));
    Fingerprint other = Fixtures.fingerprint(SPEC, "weights-sha256:other");
    var e =
        assertThrows(SegmentRejectedException.class, () -> SegmentFile.read(file, SPEC, other, 2));
    assertEquals(Reason.FOREIGN_FINGERPRINT, e.reason());
    assertTrue(e.getMessage().contains(other.hex()), e.getMessage());
  }

  @Test
  void aSegmentReadAsAnotherRangeIsRejected() throws IOException {
    Path one = written(Fixtures.block(SPEC, 1, 9, 50));
    assertEquals(Reason.WRONG_RANGE, rejection(one, 2));
    Path renamed = Files.move(one, dir.resolve(SegmentStore.fileName(2)));
    assertEquals(Reason.WRONG_RANGE, rejection(renamed, 2));
    Path last = written(Fixtures.block(SPEC, 3, 10, 50));
    assertEquals(Reason.WRONG_RANGE, rejection(last, 2));
  }
}
