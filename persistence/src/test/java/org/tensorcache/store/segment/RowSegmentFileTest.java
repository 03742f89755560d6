package org.tensorcache.store.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowFixtures;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

class RowSegmentFileTest {
  private static final CacheSpec SPEC = RowFixtures.teacherSpec(false);
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @TempDir Path dir;

  private Reason rejection(byte[] bytes, CacheSpec spec, Fingerprint fp, int range) {
    var e =
        assertThrows(
            SegmentRejectedException.class, () -> RowSegmentFile.decode(bytes, spec, fp, range));
    return e.reason();
  }

  @Test
  void roundTripsPartialCompleteAndEmptyRangesThroughFilesAndMemory() throws IOException {
    for (CacheSpec spec :
        new CacheSpec[] {SPEC, RowFixtures.teacherSpec(true), RowFixtures.plainSpec()}) {
      Fingerprint fp = Fixtures.fingerprint(spec);
      int last = spec.rangeCount() - 1;
      for (RowBlock rows :
          new RowBlock[] {
            RowFixtures.rows(spec, 0, 1, 60),
            RowFixtures.rows(spec, last, 2, 100),
            RowBlock.empty(spec, 1)
          }) {
        Path file = dir.resolve(spec.name() + "-" + rows.range() + "-" + rows.presentCount());
        RowSegmentFile.write(file, rows, fp);
        assertEquals(rows, RowSegmentFile.read(file, spec, fp, rows.range()));
        byte[] bytes = RowSegmentFile.encode(rows, fp);
        assertEquals(rows, RowSegmentFile.decode(bytes, spec, fp, rows.range()));
        assertTrue(Arrays.equals(Files.readAllBytes(file), bytes));
      }
    }
  }

  @Test
  void everyTruncationIsRejected() throws IOException {
    byte[] bytes = RowSegmentFile.encode(RowFixtures.rows(SPEC, 0, 3, 80), FP);
    for (int cut = 0; cut < bytes.length; cut += Math.max(1, bytes.length / 97)) {
      byte[] shorter = Arrays.copyOf(bytes, cut);
      assertThrows(
          SegmentRejectedException.class, () -> RowSegmentFile.decode(shorter, SPEC, FP, 0));
    }
    assertEquals(Reason.TRUNCATED, rejection(Arrays.copyOf(bytes, bytes.length - 1), SPEC, FP, 0));
  }

  @Test
  void everyFlippedDataByteIsABadChecksum() throws IOException {
    byte[] bytes = RowSegmentFile.encode(RowFixtures.rows(SPEC, 0, 4, 70), FP);
    int dataStart = 8 + (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    for (int at = dataStart; at < bytes.length; at += 7) {
      byte[] flipped = bytes.clone();
      flipped[at] ^= 0x10;
      assertEquals(Reason.BAD_CHECKSUM, rejection(flipped, SPEC, FP, 0), "byte " + at);
    }
  }

  @Test
  void aForeignCacheAnotherRangeOrABlockSegmentIsRejectedForWhatItIs() throws IOException {
    RowBlock rows = RowFixtures.rows(SPEC, 1, 5, 50);
    byte[] bytes = RowSegmentFile.encode(rows, FP);
    Fingerprint other = Fixtures.fingerprint(SPEC, "weights-sha256:cc33");
    assertNotEquals(FP, other);
    assertEquals(Reason.FOREIGN_FINGERPRINT, rejection(bytes, SPEC, other, 1));
    assertEquals(Reason.WRONG_RANGE, rejection(bytes, SPEC, FP, 2));

    CacheSpec fixed = Fixtures.spec();
    byte[] block = SegmentFile.encode(Fixtures.block(fixed, 0, 1, 50), Fixtures.fingerprint(fixed));
    var e =
        assertThrows(
            SegmentRejectedException.class, () -> RowSegmentFile.decode(block, SPEC, FP, 0));
    assertEquals(Reason.BAD_HEADER, e.reason());
    assertTrue(e.getMessage().contains("format 'tensorcache-segment/1'"), e.getMessage());
  }

  @Test
  void rowEndsThatDisagreeWithPresenceAreABadValueEvenUnderAMatchingChecksum() throws IOException {
    RowBlock rows = RowBlock.empty(SPEC, 0);
    rows.put(2, 1, new byte[] {1, 2, 3});
    byte[] bytes = RowSegmentFile.encode(rows, FP);
    int dataStart = 8 + (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    // missing example 1 given a byte of example 2's row, and the checksum made to match
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(dataStart + 4 * 16 + 8, 1);
    CRC32C crc = new CRC32C();
    crc.update(bytes, dataStart, bytes.length - dataStart);
    String header = new String(bytes, 8, dataStart - 8, StandardCharsets.UTF_8);
    String patched =
        header.replaceFirst(
            "\"crc32c\":\"[0-9a-f]{8}\"", String.format("\"crc32c\":\"%08x\"", crc.getValue()));
    System.arraycopy(patched.getBytes(StandardCharsets.UTF_8), 0, bytes, 8, dataStart - 8);
    var e =
        assertThrows(
            SegmentRejectedException.class, () -> RowSegmentFile.decode(bytes, SPEC, FP, 0));
    assertEquals(Reason.BAD_VALUE, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("example 1: missing, 0 tokens, 1 bytes"), e.getMessage());
  }

  @Test
  void aFixedShapeCacheHasNoSegmentsOfRows() {
    CacheSpec fixed = Fixtures.spec();
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RowSegmentFile.decode(new byte[16], fixed, Fixtures.fingerprint(fixed), 0));
    assertTrue(e.getMessage().contains("per-token fields only"), e.getMessage());
  }
}
