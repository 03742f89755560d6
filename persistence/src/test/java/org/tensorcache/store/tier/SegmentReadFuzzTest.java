package org.tensorcache.store.tier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
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

/**
 * Arbitrary bytes as a segment file, read by both readers: {@link SegmentFile#read} (streamed) and
 * {@link MappedSegment#open} (mapped, in chunks of a few rows or whole). Each either gives a block
 * or throws a {@link SegmentRejectedException} naming the file, and both agree: the same block, or
 * the same reason (where the streamed reader finds a bad value, the mapped one finds it when it
 * builds the block). A block read re-encodes to the very same bytes, as the header is canonical.
 *
 * <p>Random bytes rarely get past the checksum, so half the inputs are forged: the fuzzed bytes are
 * the data region of a segment whose header, checksum and presence count are made to match, which
 * leaves the value checks (a NaN, a missing example that is not the sentinel, stray presence bits)
 * and the layout of each dtype to the fuzzer.
 */
class SegmentReadFuzzTest {
  /** A range of a cache, its data small enough to fuzz. */
  record Case(CacheSpec spec, Fingerprint fingerprint, int range) {
    Case(CacheSpec spec, int range) {
      this(spec, Fixtures.fingerprint(spec), range);
    }
  }

  static final List<Case> CASES =
      List.of(
          // the short last range of an F32 scalar
          new Case(new CacheSpec("logp", 100, List.of(FieldSpec.scalar("logp")), 40), 2),
          // every dtype, a full range of 16
          new Case(
              new CacheSpec(
                  "typed",
                  50,
                  List.of(
                      new FieldSpec("emb", DType.F16, new int[] {2}),
                      new FieldSpec("gate", DType.BF16, new int[0]),
                      new FieldSpec("ids", DType.I32, new int[] {3}),
                      new FieldSpec("token", DType.I64, new int[0])),
                  16),
              1),
          // a matrix field and 6 examples: presence bits beyond the length fit in the last byte
          new Case(
              new CacheSpec(
                  "mixed",
                  70,
                  List.of(
                      new FieldSpec("hidden", DType.F32, new int[] {2, 2}),
                      new FieldSpec("tag", DType.I32, new int[0])),
                  64),
              1));

  @TempDir static Path dir;

  /**
   * The last bytes pick the case, raw or forged, whether a forged segment's missing examples get
   * the sentinel, and the mapping's chunk size; the others are the file, or the forged data.
   */
  @FuzzTest(maxDuration = "3m")
  void readSegment(FuzzedDataProvider data) throws IOException {
    Case c = CASES.get(data.consumeInt(0, CASES.size() - 1));
    boolean forged = data.consumeBoolean();
    boolean sentinels = data.consumeBoolean();
    long chunk = data.consumeBoolean() ? 8 : MappedSegment.MAX_CHUNK_BYTES;
    byte[] body = data.consumeRemainingAsBytes();
    byte[] bytes = forged ? SegmentForgery.forge(c, body, sentinels) : body;
    Path file = Files.createTempFile(dir, "range", ".safetensors");
    try {
      Files.write(file, bytes);
      check(c, file, bytes, chunk);
    } finally {
      Files.delete(file);
    }
  }

  private static void check(Case c, Path file, byte[] bytes, long chunk) throws IOException {
    Block streamed = null;
    Reason rejected = null;
    try {
      streamed = SegmentFile.read(file, c.spec(), c.fingerprint(), c.range());
    } catch (SegmentRejectedException e) {
      rejected = reasonOf(e, file);
    }

    MappedSegment mapped;
    try {
      mapped = MappedSegment.open(file, c.spec(), c.fingerprint(), c.range(), chunk);
    } catch (SegmentRejectedException e) {
      assertEquals(rejected, reasonOf(e, file), "mapped and streamed readers differ");
      return;
    }
    try (mapped) {
      if (rejected != null) {
        // the mapped reader skips the value scan until it builds a block
        assertEquals(Reason.BAD_VALUE, rejected, "mapped reader opened a rejected file");
        try {
          mapped.toBlock();
        } catch (SegmentRejectedException e) {
          assertEquals(Reason.BAD_VALUE, reasonOf(e, file));
          return;
        }
        throw new AssertionError("mapped reader built a block the streamed one rejects");
      }
      assertEquals(streamed, mapped.toBlock());
      assertEquals(streamed.presentCount(), mapped.presentCount());
      Object[] want = newRow(c.spec());
      Object[] got = newRow(c.spec());
      for (long i = streamed.start(); i < streamed.start() + streamed.length(); i++) {
        assertEquals(streamed.gather(i, want, 0), mapped.gather(i, got, 0));
        for (int f = 0; f < want.length; f++) {
          assertTrue(FieldArrays.equal(want[f], got[f]), "index " + i + " field " + f);
        }
      }
    }
    assertArrayEquals(bytes, encode(streamed, c.fingerprint()), "a block read re-encodes");
  }

  private static Reason reasonOf(SegmentRejectedException e, Path file) {
    assertNotNull(e.reason());
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    return e.reason();
  }

  private static Object[] newRow(CacheSpec spec) {
    Object[] row = new Object[spec.fields().size()];
    for (int f = 0; f < row.length; f++) {
      row[f] = spec.fields().get(f).dtype().newArray(spec.fields().get(f).width());
    }
    return row;
  }

  /** The bytes {@link SegmentFile} writes for {@code block}. */
  static byte[] encode(Block block, Fingerprint fingerprint) throws IOException {
    return SegmentFile.encode(block, fingerprint);
  }

  /** Segments whose header matches a data region given by the fuzzer. */
  static final class SegmentForgery {
    private SegmentForgery() {}

    /**
     * A segment of {@code c} whose data region is {@code data} cut or padded with zeros to its
     * length, the presence count and the checksum in the header made to match; with {@code
     * sentinels} the examples the presence bits leave out hold the sentinel.
     */
    static byte[] forge(Case c, byte[] data, boolean sentinels) throws IOException {
      Block empty = Block.empty(c.spec(), c.range());
      byte[] template = encode(empty, c.fingerprint());
      ByteBuffer le = ByteBuffer.wrap(template).order(ByteOrder.LITTLE_ENDIAN);
      int headerLength = (int) le.getLong(0);
      byte[] region = Arrays.copyOf(data, template.length - 8 - headerLength);
      int length = empty.length();
      int presenceStart = region.length - (length + 7) / 8;
      int present = 0;
      for (int i = presenceStart; i < region.length; i++) {
        present += Integer.bitCount(region[i] & 0xff);
      }
      if (sentinels) {
        fillSentinels(c.spec(), region, presenceStart, length);
      }
      CRC32C crc = new CRC32C();
      crc.update(region);
      String header =
          new String(template, 8, headerLength, StandardCharsets.US_ASCII)
              .stripTrailing()
              .replaceFirst("\"present\":\"0\"", "\"present\":\"" + present + "\"")
              .replaceFirst(
                  "\"crc32c\":\"[0-9a-f]{8}\"",
                  String.format("\"crc32c\":\"%08x\"", (int) crc.getValue()));
      byte[] json = header.getBytes(StandardCharsets.US_ASCII);
      int padded = (json.length + 7) & ~7;
      ByteBuffer out =
          ByteBuffer.allocate(8 + padded + region.length).order(ByteOrder.LITTLE_ENDIAN);
      out.putLong(padded).put(json);
      while (out.position() < 8 + padded) {
        out.put((byte) ' ');
      }
      return out.put(region).array();
    }

    private static void fillSentinels(CacheSpec spec, byte[] region, int presenceStart, int n) {
      ByteBuffer out = ByteBuffer.wrap(region).order(ByteOrder.LITTLE_ENDIAN);
      int offset = 0;
      for (FieldSpec field : spec.fields()) {
        DType t = field.dtype();
        Object sentinel = FieldArrays.sentinels(t, field.width());
        int rowBytes = field.width() * t.bytes();
        for (int i = 0; i < n; i++) {
          if ((region[presenceStart + i / 8] & (1 << (i % 8))) == 0) {
            FieldArrays.write(t, sentinel, 0, field.width(), out.position(offset + i * rowBytes));
          }
        }
        offset += n * rowBytes;
      }
    }
  }
}
