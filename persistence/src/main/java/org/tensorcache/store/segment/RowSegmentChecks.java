package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.expect;
import static org.tensorcache.store.segment.SafetensorsChecks.reject;
import static org.tensorcache.store.segment.SafetensorsWriter.crcHex;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The checks of a segment of rows ({@link RowSegmentFile}), in the order it reads: the metadata
 * that says whose segment it is, before the data; the canonical header with the data's checksum,
 * once the data is read; then that the tokens, row ends and presence agree with each other.
 */
final class RowSegmentChecks {
  private RowSegmentChecks() {}

  /**
   * The metadata, once it names this format, the cache {@code expected} identifies and range {@code
   * range}; a segment of blocks is told apart by its format before its keys are counted.
   */
  static Map<String, String> checkMetadata(
      Path file, ObjectNode root, CacheSpec spec, Fingerprint expected, int range) {
    List<String> keys = RowSegmentFile.KEYS;
    Map<String, String> some = SafetensorsChecks.metadata(file, root, keys, Set.copyOf(keys));
    expect(file, Reason.BAD_HEADER, "format", some, RowSegmentFile.FORMAT);
    Map<String, String> meta = SafetensorsChecks.metadata(file, root, keys);
    SegmentChecks.expectOwner(file, meta, spec, expected, range);
    SafetensorsChecks.checkCrcSyntax(file, meta.get("crc32c"));
    return meta;
  }

  /** The {@code row_bytes} of the metadata: a count that fits one array. */
  static long rowBytes(Path file, Map<String, String> meta) {
    String text = meta.get("row_bytes");
    long n = -1;
    if (text.matches("0|[1-9][0-9]{0,18}")) {
      n = Long.parseLong(text);
    }
    if (n < 0 || n > RowSegmentFile.MAX_ROW_BYTES) {
      throw reject(
          file,
          Reason.BAD_HEADER,
          "row_bytes '%s', expected a count in [0, %d]",
          text,
          RowSegmentFile.MAX_ROW_BYTES);
    }
    return n;
  }

  /**
   * The header must be byte for byte the one the writer makes for what was read ({@code meta}, the
   * data's {@code crc32c}); where it is not, a wrong checksum is named first, as it says the data
   * changed, then a wrong count.
   */
  static void checkHeader(
      Path file,
      byte[] header,
      List<TensorInfo> tensors,
      Map<String, String> found,
      Map<String, String> meta,
      int crc32c) {
    meta.put("crc32c", crcHex(crc32c));
    if (!Arrays.equals(header, SafetensorsJson.encode(tensors, meta))) {
      expect(file, Reason.BAD_CHECKSUM, "crc32c", found, meta.get("crc32c"));
      expect(file, Reason.BAD_HEADER, "present", found, meta.get("present"));
      expect(file, Reason.BAD_HEADER, "tokens", found, meta.get("tokens"));
      throw reject(file, Reason.BAD_HEADER, "header is not in the canonical form this writer uses");
    }
  }

  /** The rows, once each example's tokens, row end and presence bit agree. */
  static RowBlock rows(
      Path file,
      CacheSpec spec,
      int range,
      int[] tokens,
      long[] ends,
      byte[] all,
      long[] presence) {
    RowBlock rows = RowBlock.empty(spec, range);
    long start = spec.rangeStart(range);
    long from = 0;
    for (int i = 0; i < tokens.length; i++) {
      boolean present = (presence[i >>> 6] >>> (i & 63) & 1) != 0;
      long end = ends[i];
      if (end < from || end > all.length) {
        throw reject(
            file,
            Reason.BAD_VALUE,
            "example %d: row ends at %d, expected one in [%d, %d]",
            start + i,
            end,
            from,
            all.length);
      }
      if (present != tokens[i] > 0 || (!present && end != from) || tokens[i] < 0) {
        throw reject(
            file,
            Reason.BAD_VALUE,
            "example %d: %s, %d tokens, %d bytes; expected tokens > 0 exactly where present,"
                + " and no bytes where missing",
            start + i,
            present ? "present" : "missing",
            tokens[i],
            end - from);
      }
      if (present) {
        rows.put(start + i, tokens[i], Arrays.copyOfRange(all, (int) from, (int) end));
      }
      from = end;
    }
    if (from != all.length) {
      throw reject(
          file,
          Reason.BAD_VALUE,
          "rows end at byte %d of %d, expected the last row to end them",
          from,
          all.length);
    }
    return rows;
  }
}
