package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.io.DataRegionReader;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Writes the rows of one range of a per-token cache as a safetensors segment and reads it back with
 * the strict checks of {@link SegmentFile}: CRC32C of the data, the cache's fingerprint, the range,
 * a canonical header and a size that agrees with it.
 *
 * <p>Layout, in this order: {@value #TOKENS} ({@code I32 [length]}: each example's tokens, 0 where
 * it is missing), {@value #ENDS} ({@code I64 [length]}: where each example's row ends in {@value
 * #ROWS}, which it starts where the one before ends), {@value #ROWS} ({@code U8 [row_bytes]}: the
 * rows as {@code RowCodec} codes them) and {@value SegmentFile#PRESENT} ({@code U8
 * [ceil(length/8)]}, as in a block's segment). The metadata also gives {@code tokens} and {@code
 * row_bytes}, the totals.
 */
public final class RowSegmentFile {
  /** The {@code format} metadata value of a segment of rows. */
  public static final String FORMAT = "tensorcache-rows/1";

  /** Name of the tokens-per-example tensor. */
  public static final String TOKENS = "__tokens__";

  /** Name of the row ends tensor. */
  public static final String ENDS = "__row_ends__";

  /** Name of the rows' bytes tensor. */
  public static final String ROWS = "__rows__";

  static final List<String> KEYS =
      List.of(
          "format",
          "cache_id",
          "fingerprint",
          "range",
          "start",
          "length",
          "present",
          "tokens",
          "row_bytes",
          "crc32c");

  /** The most bytes of rows one segment holds, so that they fit one Java array. */
  public static final long MAX_ROW_BYTES = Integer.MAX_VALUE - 8;

  private RowSegmentFile() {}

  /** Atomically writes {@code rows} to {@code file}, tagged with {@code fingerprint}. */
  public static void write(Path file, RowBlock rows, Fingerprint fingerprint) throws IOException {
    AtomicFiles.write(file, ch -> writeTo(ch, rows, fingerprint));
  }

  /** Writes the segment's bytes to {@code ch} from position 0 (no fsync, no rename). */
  public static void writeTo(FileChannel ch, RowBlock rows, Fingerprint fingerprint)
      throws IOException {
    fingerprint.checkBelongsTo(rows.spec());
    SafetensorsWriter.writeTo(ch, tensors(rows), metadata(fingerprint, rows), data(rows));
  }

  /** The segment's bytes, in memory: what {@link #write} puts in the file. */
  public static byte[] encode(RowBlock rows, Fingerprint fingerprint) throws IOException {
    fingerprint.checkBelongsTo(rows.spec());
    return SafetensorsWriter.encode(tensors(rows), metadata(fingerprint, rows), data(rows));
  }

  /**
   * Reads the segment in {@code file}, which must be range {@code range} of the cache that {@code
   * expected} identifies; any failed check throws {@link SegmentRejectedException}.
   */
  public static RowBlock read(Path file, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    spec.checkPerToken("a segment of rows");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      byte[] header = SafetensorsReader.read(file, ch, size);
      return read(
          file, size, header, spec, expected, range, l -> new DataRegionReader(ch, l, size - l));
    }
  }

  /** Like {@link #read}, of a segment's bytes in memory ({@link #encode}'s), with every check. */
  public static RowBlock decode(byte[] bytes, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    spec.checkPerToken("a segment of rows");
    Path file = Path.of("in-memory segment");
    ByteBuffer whole = ByteBuffer.wrap(bytes);
    byte[] header = SafetensorsReader.read(file, whole);
    return read(
        file,
        bytes.length,
        header,
        spec,
        expected,
        range,
        l -> new DataRegionReader(whole, l, bytes.length - l));
  }

  private interface Region {
    DataRegionReader from(long dataStart);
  }

  private static RowBlock read(
      Path file,
      long size,
      byte[] header,
      CacheSpec spec,
      Fingerprint expected,
      int range,
      Region region)
      throws IOException {
    expected.checkBelongsTo(spec);
    int length = spec.rangeLength(range);
    ObjectNode root = SafetensorsJson.parse(file, header);
    Map<String, String> found = RowSegmentChecks.checkMetadata(file, root, spec, expected, range);
    long rowBytes = RowSegmentChecks.rowBytes(file, found);
    List<TensorInfo> tensors = tensors(length, rowBytes);
    SafetensorsChecks.checkTensors(file, root, tensors);
    long dataLength = TensorInfo.dataLength(tensors);
    SafetensorsChecks.checkFileSize(file, size, header.length, dataLength);
    try {
      DataRegionReader in = region.from(8L + header.length);
      int[] tokens = new int[length];
      in.getElements(DType.I32, tokens, 0, length);
      long[] ends = new long[length];
      in.getElements(DType.I64, ends, 0, length);
      byte[] all = new byte[(int) rowBytes];
      in.getBytes(all, 0, all.length);
      byte[] packed = new byte[(length + 7) / 8];
      in.getBytes(packed, 0, packed.length);
      long[] words = SegmentChecks.unpackPresence(file, packed, length);
      long totalTokens = 0;
      for (int t : tokens) {
        totalTokens += t;
      }
      int present = 0;
      for (long w : words) {
        present += Long.bitCount(w);
      }
      Map<String, String> meta = metadata(expected, spec, range, present, totalTokens, rowBytes);
      RowSegmentChecks.checkHeader(file, header, tensors, found, meta, in.crc32c());
      return RowSegmentChecks.rows(file, spec, range, tokens, ends, all, words);
    } catch (EOFException e) {
      throw reject(file, Reason.TRUNCATED, "%s", e.getMessage());
    }
  }

  private static List<TensorInfo> tensors(RowBlock rows) {
    return tensors(rows.length(), checkedRowBytes(rows));
  }

  static List<TensorInfo> tensors(int length, long rowBytes) {
    return List.of(
        new TensorInfo(TOKENS, "I32", new long[] {length}),
        new TensorInfo(ENDS, "I64", new long[] {length}),
        new TensorInfo(ROWS, "U8", new long[] {rowBytes}),
        new TensorInfo(SegmentFile.PRESENT, "U8", new long[] {(length + 7) / 8}));
  }

  private static long checkedRowBytes(RowBlock rows) {
    if (rows.rowBytes() > MAX_ROW_BYTES) {
      throw new IllegalArgumentException(
          rows
              + ": more than "
              + MAX_ROW_BYTES
              + " bytes of rows in one segment, expected a smaller range size");
    }
    return rows.rowBytes();
  }

  private static Map<String, String> metadata(Fingerprint fingerprint, RowBlock rows) {
    return metadata(
        fingerprint,
        rows.spec(),
        rows.range(),
        rows.presentCount(),
        rows.totalTokens(),
        rows.rowBytes());
  }

  /** The metadata of a segment of rows, in the order the writer puts it, without the checksum. */
  static Map<String, String> metadata(
      Fingerprint fingerprint, CacheSpec spec, int range, int present, long tokens, long rowBytes) {
    Map<String, String> meta = SegmentFile.metadata(fingerprint, spec, range, present);
    meta.put("format", FORMAT); // in the first place, where the block segment's format is
    meta.put("tokens", Long.toString(tokens));
    meta.put("row_bytes", Long.toString(rowBytes));
    return meta;
  }

  /** The data region: tokens, row ends, rows, presence bits. */
  private static SafetensorsWriter.DataWriter data(RowBlock rows) {
    return out -> {
      int length = rows.length();
      int[] tokens = new int[length];
      long[] ends = new long[length];
      byte[] packed = new byte[(length + 7) / 8];
      long end = 0;
      for (int i = 0; i < length; i++) {
        long index = rows.start() + i;
        tokens[i] = rows.tokens(index);
        byte[] row = rows.row(index);
        if (row != null) {
          end += row.length;
          packed[i >>> 3] |= (byte) (1 << (i & 7));
        }
        ends[i] = end;
      }
      out.putElements(DType.I32, tokens, 0, length);
      out.putElements(DType.I64, ends, 0, length);
      for (int i = 0; i < length; i++) {
        byte[] row = rows.row(rows.start() + i);
        if (row != null) {
          out.putBytes(row, 0, row.length);
        }
      }
      out.putBytes(packed, 0, packed.length);
    };
  }
}
