package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.expect;
import static org.tensorcache.store.segment.SafetensorsChecks.reject;
import static org.tensorcache.store.segment.SafetensorsWriter.crcHex;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The strict checks of a segment that do not depend on how its data is read: {@link
 * SegmentFile#read} streams the data, a reader that maps the file runs the same checks. In order:
 * {@link #checkLayout} before the data is read, {@link #unpackPresence} and {@link #checkHeader}
 * after, each throwing {@link SegmentRejectedException} with the reason {@link SegmentFile#read}
 * gives.
 */
public final class SegmentChecks {
  private SegmentChecks() {}

  /**
   * Where the tensors of a segment lie in its file, once {@link #checkLayout} has found the file's
   * size to agree with its header: the fields in spec order, then the packed presence bits.
   */
  public static final class Layout {
    private final long dataStart;
    private final long[] offsets;

    private Layout(long dataStart, long[] offsets) {
      this.dataStart = dataStart;
      this.offsets = offsets;
    }

    /** The file offset of the data region, just after the header. */
    public long dataStart() {
      return dataStart;
    }

    /** The bytes of the data region, which ends the file. */
    public long dataLength() {
      return offsets[offsets.length - 1];
    }

    /** The file offset of tensor {@code t}: field {@code t}, or the presence bits after them. */
    public long tensorStart(int t) {
      return dataStart + offsets[t];
    }

    /** The bytes of tensor {@code t}. */
    public long tensorBytes(int t) {
      return offsets[t + 1] - offsets[t];
    }
  }

  /**
   * The first checks of a segment, before its data is read: the file's size must be what the header
   * of range {@code range} of {@code spec} implies; where it is not, a header that names another
   * cache or range, or other tensors, is rejected for that first, as it says more.
   *
   * @param header the header bytes as {@link SafetensorsReader} read them
   */
  public static Layout checkLayout(
      Path file, long fileSize, byte[] header, CacheSpec spec, Fingerprint expected, int range) {
    expected.checkBelongsTo(spec);
    List<TensorInfo> tensors = SegmentFile.tensors(spec, range);
    long dataLength = TensorInfo.dataLength(tensors);
    if (fileSize != 8L + header.length + dataLength) {
      diagnose(file, header, tensors, spec, expected, range); // names what is wrong first
      SafetensorsChecks.checkFileSize(file, fileSize, header.length, dataLength);
    }
    long[] offsets = new long[tensors.size() + 1];
    for (int t = 0; t < tensors.size(); t++) {
      offsets[t + 1] = offsets[t] + tensors.get(t).byteLength();
    }
    return new Layout(8L + header.length, offsets);
  }

  /**
   * The last check of a segment, once its data is read: the header must be byte for byte the one
   * this writer makes for range {@code range} holding {@code present} examples whose data region
   * has the CRC32C {@code crc32c}. Where it is not, the first check that fails names the value
   * found and the one expected (a wrong checksum is {@link Reason#BAD_CHECKSUM}).
   */
  public static void checkHeader(
      Path file,
      byte[] header,
      CacheSpec spec,
      Fingerprint expected,
      int range,
      int present,
      int crc32c) {
    List<TensorInfo> tensors = SegmentFile.tensors(spec, range);
    // the header this writer makes for what was read; byte equality checks every key at once
    Map<String, String> meta = SegmentFile.metadata(expected, spec, range, present);
    meta.put("crc32c", crcHex(crc32c));
    if (!Arrays.equals(header, SafetensorsJson.encode(tensors, meta))) {
      Map<String, String> found = diagnose(file, header, tensors, spec, expected, range);
      expect(file, Reason.BAD_CHECKSUM, "crc32c", found, meta.get("crc32c"));
      expect(file, Reason.BAD_HEADER, "present", found, Integer.toString(present));
      throw reject(file, Reason.BAD_HEADER, "header is not in the canonical form this writer uses");
    }
  }

  /**
   * The presence bitset of a range of {@code length} examples from its packed bytes (bit {@code i %
   * 8} of byte {@code i / 8}) as words (bit {@code i % 64} of word {@code i / 64}); a bit set at or
   * beyond {@code length} is {@link Reason#BAD_VALUE}.
   */
  public static long[] unpackPresence(Path file, byte[] packed, int length) {
    if (length % 8 != 0 && (packed[packed.length - 1] & 0xff) >>> (length % 8) != 0) {
      throw reject(file, Reason.BAD_VALUE, "presence bits set beyond length %d", length);
    }
    long[] words = new long[(length + 63) / 64];
    for (int i = 0; i < packed.length; i++) {
      words[i >>> 3] |= (packed[i] & 0xffL) << ((i & 7) << 3);
    }
    return words;
  }

  /** The strict header checks one by one, for a header that is not the expected one. */
  private static Map<String, String> diagnose(
      Path file,
      byte[] header,
      List<TensorInfo> tensors,
      CacheSpec spec,
      Fingerprint expected,
      int range) {
    ObjectNode root = SafetensorsJson.parse(file, header);
    Map<String, String> meta = SafetensorsChecks.metadata(file, root, SegmentFile.KEYS);
    expect(file, Reason.BAD_HEADER, "format", meta, SegmentFile.FORMAT);
    expectOwner(file, meta, spec, expected, range);
    SafetensorsChecks.checkCrcSyntax(file, meta.get("crc32c"));
    SafetensorsChecks.checkTensors(file, root, tensors);
    return meta;
  }

  /**
   * Requires the metadata to name the cache {@code expected} identifies ({@link
   * Reason#FOREIGN_FINGERPRINT}) and range {@code range} of it ({@link Reason#WRONG_RANGE}).
   */
  static void expectOwner(
      Path file, Map<String, String> meta, CacheSpec spec, Fingerprint expected, int range) {
    expect(file, Reason.FOREIGN_FINGERPRINT, "fingerprint", meta, expected.hex());
    expect(file, Reason.FOREIGN_FINGERPRINT, "cache_id", meta, expected.cacheId());
    expect(file, Reason.WRONG_RANGE, "range", meta, Integer.toString(range));
    expect(file, Reason.WRONG_RANGE, "start", meta, Long.toString(spec.rangeStart(range)));
    expect(file, Reason.WRONG_RANGE, "length", meta, Integer.toString(spec.rangeLength(range)));
  }
}
