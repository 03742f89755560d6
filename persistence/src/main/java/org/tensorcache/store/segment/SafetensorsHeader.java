package org.tensorcache.store.segment;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;

/**
 * Writes and strictly checks the header of a safetensors file: an 8-byte little-endian length, then
 * compact JSON padded with spaces to a multiple of 8 bytes, holding {@code __metadata__} and the
 * tensors in data order with contiguous offsets.
 */
public final class SafetensorsHeader {
  /** The header key of the string-to-string metadata. */
  public static final String METADATA = "__metadata__";

  /** The largest header accepted, far above what any cache spec needs. */
  public static final long MAX_HEADER_BYTES = 16L << 20;

  private static final Set<String> ENTRY_KEYS = Set.of("dtype", "shape", "data_offsets");
  private static final JsonMapper JSON =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  private SafetensorsHeader() {}

  /** The header JSON (without the length prefix), padded with spaces to a multiple of 8 bytes. */
  public static byte[] encode(List<TensorInfo> tensors, Map<String, String> metadata) {
    byte[] json = plainJson(tensors, metadata);
    if (json == null) {
      json = jacksonJson(tensors, metadata);
    }
    byte[] padded = Arrays.copyOf(json, (json.length + 7) & ~7);
    Arrays.fill(padded, json.length, padded.length, (byte) ' ');
    return padded;
  }

  /**
   * The compact JSON Jackson writes, built directly when every string is printable ASCII without
   * quote or backslash (always so for this writer's names and values): no tree, no escaping rules
   * to follow, a few times faster on every segment read and write. Null otherwise.
   */
  private static byte[] plainJson(List<TensorInfo> tensors, Map<String, String> metadata) {
    StringBuilder b = new StringBuilder(256 + 96 * tensors.size());
    b.append("{\"").append(METADATA).append("\":{");
    String sep = "";
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      if (!plain(e.getKey()) || !plain(e.getValue())) {
        return null;
      }
      b.append(sep).append('"').append(e.getKey()).append("\":\"").append(e.getValue()).append('"');
      sep = ",";
    }
    b.append('}');
    long offset = 0;
    for (TensorInfo t : tensors) {
      if (!plain(t.name()) || !plain(t.dtype())) {
        return null;
      }
      b.append(",\"").append(t.name()).append("\":{\"dtype\":\"").append(t.dtype());
      b.append("\",\"shape\":[");
      long[] shape = t.shape();
      for (int i = 0; i < shape.length; i++) {
        b.append(i == 0 ? "" : ",").append(shape[i]);
      }
      long end = offset + t.byteLength();
      b.append("],\"data_offsets\":[").append(offset).append(',').append(end).append("]}");
      offset = end;
    }
    return b.append('}').toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  private static boolean plain(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        return false;
      }
    }
    return true;
  }

  /** The same JSON through Jackson's tree, which escapes what needs it. */
  static byte[] jacksonJson(List<TensorInfo> tensors, Map<String, String> metadata) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode meta = root.putObject(METADATA);
    metadata.forEach(meta::put);
    long offset = 0;
    for (TensorInfo t : tensors) {
      ObjectNode entry = root.putObject(t.name());
      entry.put("dtype", t.dtype());
      ArrayNode shape = entry.putArray("shape");
      for (long d : t.shape()) {
        shape.add(d);
      }
      long end = offset + t.byteLength();
      entry.putArray("data_offsets").add(offset).add(end);
      offset = end;
    }
    try {
      return JSON.writeValueAsBytes(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode a safetensors header", e);
    }
  }

  /** Total bytes of the data region of {@code tensors}. */
  public static long dataLength(List<TensorInfo> tensors) {
    long total = 0;
    for (TensorInfo t : tensors) {
      total = Math.addExact(total, t.byteLength());
    }
    return total;
  }

  /** Writes the length prefix and {@code header} at the start of the file. */
  public static void writePrefixAndHeader(FileChannel ch, byte[] header) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(8 + header.length).order(ByteOrder.LITTLE_ENDIAN);
    buf.putLong(header.length).put(header).flip();
    long pos = 0;
    while (buf.hasRemaining()) {
      pos += ch.write(buf, pos);
    }
  }

  /** Reads the header bytes after checking the length prefix against bounds and the file size. */
  public static byte[] read(Path file, FileChannel ch, long fileSize) throws IOException {
    if (fileSize < 8) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected at least 8", fileSize);
    }
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    readFully(ch, prefix, 0);
    int n = checkLength(file, prefix.flip().getLong(), fileSize);
    ByteBuffer header = ByteBuffer.allocate(n);
    readFully(ch, header, 8);
    return header.array();
  }

  /** Like {@link #read(Path, FileChannel, long)}, from the whole file already in {@code file}. */
  public static byte[] read(Path file, ByteBuffer whole) {
    long fileSize = whole.remaining();
    if (fileSize < 8) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected at least 8", fileSize);
    }
    ByteBuffer le = whole.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int n = checkLength(file, le.getLong(), fileSize);
    byte[] header = new byte[n];
    le.get(header);
    return header;
  }

  /** The header length of a file's prefix, checked against the limits and the file's size. */
  private static int checkLength(Path file, long n, long fileSize) {
    if (n < 2 || n > MAX_HEADER_BYTES) {
      throw reject(
          file,
          Reason.BAD_HEADER,
          "header length %s, expected 2..%d",
          Long.toUnsignedString(n),
          MAX_HEADER_BYTES);
    }
    if (n % 8 != 0) {
      throw reject(file, Reason.BAD_HEADER, "header length %d, expected a multiple of 8", n);
    }
    if (fileSize < 8 + n) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected 8 + header %d", fileSize, n);
    }
    return (int) n;
  }

  /** Parses the header as strict JSON: one object, no duplicate keys, nothing after it. */
  public static ObjectNode parse(Path file, byte[] header) {
    JsonNode root;
    try {
      root = JSON.readTree(header);
    } catch (IOException e) {
      throw reject(file, Reason.BAD_HEADER, "header is not valid JSON: %s", e.getMessage());
    }
    if (!(root instanceof ObjectNode obj)) {
      throw reject(file, Reason.BAD_HEADER, "header is not a JSON object");
    }
    return obj;
  }

  /** The metadata, which must have exactly {@code keys}, each a string; in the order of keys. */
  public static Map<String, String> metadata(Path file, ObjectNode root, List<String> keys) {
    if (!(root.get(METADATA) instanceof ObjectNode meta)) {
      throw reject(file, Reason.BAD_HEADER, "no %s object in the header", METADATA);
    }
    Map<String, String> found = new LinkedHashMap<>();
    for (String key : keys) {
      JsonNode v = meta.get(key);
      if (v == null || !v.isTextual()) {
        throw reject(file, Reason.BAD_HEADER, "metadata '%s' %s, expected a string", key, v);
      }
      found.put(key, v.textValue());
    }
    for (Map.Entry<String, JsonNode> e : meta.properties()) {
      if (!found.containsKey(e.getKey())) {
        throw reject(
            file, Reason.BAD_HEADER, "unknown metadata key '%s', expected %s", e.getKey(), keys);
      }
    }
    return found;
  }

  /** Requires exactly the {@code expected} tensors with their dtype, shape and offsets. */
  public static void checkTensors(Path file, ObjectNode root, List<TensorInfo> expected) {
    Set<String> names = new HashSet<>();
    expected.forEach(t -> names.add(t.name()));
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      if (!e.getKey().equals(METADATA) && !names.contains(e.getKey())) {
        throw reject(
            file, Reason.BAD_HEADER, "unknown tensor '%s', expected %s", e.getKey(), names);
      }
    }
    long offset = 0;
    for (TensorInfo t : expected) {
      if (!(root.get(t.name()) instanceof ObjectNode entry)) {
        throw reject(file, Reason.BAD_HEADER, "tensor '%s' missing or not an object", t.name());
      }
      for (Map.Entry<String, JsonNode> e : entry.properties()) {
        if (!ENTRY_KEYS.contains(e.getKey())) {
          throw reject(
              file, Reason.BAD_HEADER, "tensor '%s' has unknown key '%s'", t.name(), e.getKey());
        }
      }
      JsonNode dtype = entry.get("dtype");
      if (dtype == null || !t.dtype().equals(dtype.textValue())) {
        throw reject(
            file,
            Reason.SHAPE_MISMATCH,
            "tensor '%s' dtype %s, expected %s",
            t.name(),
            dtype,
            t.dtype());
      }
      long end = offset + t.byteLength();
      expectLongs(file, t.name(), "shape", entry.get("shape"), t.shape());
      expectLongs(file, t.name(), "data_offsets", entry.get("data_offsets"), offset, end);
      offset = end;
    }
  }

  /** Requires the header to be byte for byte what {@link #encode} writes for these values. */
  public static void checkCanonical(
      Path file, byte[] header, List<TensorInfo> tensors, Map<String, String> metadata) {
    if (!Arrays.equals(header, encode(tensors, metadata))) {
      throw reject(file, Reason.BAD_HEADER, "header is not in the canonical form this writer uses");
    }
  }

  /** Requires the file size to be exactly {@code 8 + headerLength + dataLength}. */
  public static void checkFileSize(Path file, long fileSize, long headerLength, long dataLength) {
    long expected = 8 + headerLength + dataLength;
    if (fileSize != expected) {
      throw reject(
          file,
          fileSize < expected ? Reason.TRUNCATED : Reason.OVERSIZED,
          "%d bytes, expected 8 + header %d + data %d = %d",
          fileSize,
          headerLength,
          dataLength,
          expected);
    }
  }

  /** Requires metadata {@code key} to equal {@code expected}, else rejects for {@code reason}. */
  public static void expect(
      Path file, Reason reason, String key, Map<String, String> meta, String expected) {
    if (!expected.equals(meta.get(key))) {
      throw reject(file, reason, "%s '%s', expected '%s'", key, meta.get(key), expected);
    }
  }

  /** Requires {@code crc} to be a CRC32C as {@link #crcHex} writes it. */
  public static void checkCrcSyntax(Path file, String crc) {
    if (!crc.matches("[0-9a-f]{8}")) {
      throw reject(file, Reason.BAD_HEADER, "crc32c '%s', expected 8 lowercase hex digits", crc);
    }
  }

  /** A CRC32C as 8 lowercase hex digits. */
  public static String crcHex(int crc) {
    return String.format("%08x", crc);
  }

  /** A rejection of {@code file} with a formatted message. */
  public static SegmentRejectedException reject(
      Path file, Reason reason, String format, Object... args) {
    return new SegmentRejectedException(file, reason, String.format(format, args));
  }

  private static void expectLongs(
      Path file, String tensor, String key, JsonNode node, long... expected) {
    boolean ok = node != null && node.isArray() && node.size() == expected.length;
    for (int i = 0; ok && i < expected.length; i++) {
      JsonNode d = node.get(i);
      ok = d.isIntegralNumber() && d.canConvertToLong() && d.longValue() == expected[i];
    }
    if (!ok) {
      throw reject(
          file,
          Reason.SHAPE_MISMATCH,
          "tensor '%s' %s %s, expected %s",
          tensor,
          key,
          node,
          Arrays.toString(expected));
    }
  }

  private static void readFully(FileChannel ch, ByteBuffer dst, long position) throws IOException {
    while (dst.hasRemaining()) {
      int n = ch.read(dst, position);
      if (n < 0) {
        throw new java.io.EOFException("file ended at byte " + position);
      }
      position += n;
    }
  }

  /** Streams a file's data region; the writer keeps its CRC32C. */
  @FunctionalInterface
  public interface DataWriter {
    /** Writes every tensor's bytes, in header order, to {@code out}. */
    void write(org.tensorcache.store.io.DataRegionWriter out) throws IOException;
  }

  /**
   * Writes a safetensors file crash-safely (temp file, fsync, rename, directory fsync): {@code
   * data} streams the data region, then the header goes in front of it with the data's CRC32C in
   * the metadata key {@code crc32c}. The CRC is fixed-width hex, so the header's length is known
   * before the data is written.
   */
  public static void writeFile(
      Path file, List<TensorInfo> tensors, Map<String, String> metadata, DataWriter data)
      throws IOException {
    org.tensorcache.store.io.AtomicFiles.write(file, ch -> writeTo(ch, tensors, metadata, data));
  }

  /** Writes the same bytes as {@link #writeFile} to {@code ch} from position 0, as they come. */
  public static void writeTo(
      FileChannel ch, List<TensorInfo> tensors, Map<String, String> metadata, DataWriter data)
      throws IOException {
    Map<String, String> meta = new java.util.LinkedHashMap<>(metadata);
    meta.put("crc32c", crcHex(0));
    int headerLength = encode(tensors, meta).length;
    var out =
        new org.tensorcache.store.io.DataRegionWriter(ch, 8L + headerLength, dataLength(tensors));
    data.write(out);
    out.flush();
    meta.put("crc32c", crcHex(out.crc32c()));
    writePrefixAndHeader(ch, encode(tensors, meta));
  }
}
