package org.tensorcache.store.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;

/**
 * The strict checks of a parsed safetensors header against what this project writes: exactly the
 * expected metadata keys and tensors, the canonical bytes, the file size and the checksum's form.
 * Each failed check throws a {@link SegmentRejectedException} naming the value found and expected.
 */
public final class SafetensorsChecks {
  private static final Set<String> ENTRY_KEYS = Set.of("dtype", "shape", "data_offsets");

  private SafetensorsChecks() {}

  /** The metadata, which must have exactly {@code keys}, each a string; in the order of keys. */
  public static Map<String, String> metadata(Path file, ObjectNode root, List<String> keys) {
    return metadata(file, root, keys, Set.of());
  }

  /**
   * The metadata, which must have {@code keys}, each a string, but those of {@code optional} may be
   * missing (files written before they were); the found ones in the order of keys.
   */
  public static Map<String, String> metadata(
      Path file, ObjectNode root, List<String> keys, Set<String> optional) {
    if (!(root.get(SafetensorsJson.METADATA) instanceof ObjectNode meta)) {
      throw reject(file, Reason.BAD_HEADER, "no %s object in the header", SafetensorsJson.METADATA);
    }
    Map<String, String> found = new LinkedHashMap<>();
    for (String key : keys) {
      JsonNode v = meta.get(key);
      if (v == null && optional.contains(key)) {
        continue;
      }
      if (v == null || !v.isTextual()) {
        throw reject(file, Reason.BAD_HEADER, "metadata '%s' %s, expected a string", key, v);
      }
      found.put(key, v.textValue());
    }
    for (Map.Entry<String, JsonNode> e : meta.properties()) {
      if (!keys.contains(e.getKey())) {
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
      if (!e.getKey().equals(SafetensorsJson.METADATA) && !names.contains(e.getKey())) {
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

  /**
   * Requires the header to be byte for byte what {@link SafetensorsJson#encode} writes for these
   * values.
   */
  public static void checkCanonical(
      Path file, byte[] header, List<TensorInfo> tensors, Map<String, String> metadata) {
    if (!Arrays.equals(header, SafetensorsJson.encode(tensors, metadata))) {
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

  /** Requires {@code crc} to be a CRC32C as {@link SafetensorsWriter#crcHex} writes it. */
  public static void checkCrcSyntax(Path file, String crc) {
    if (!crc.matches("[0-9a-f]{8}")) {
      throw reject(file, Reason.BAD_HEADER, "crc32c '%s', expected 8 lowercase hex digits", crc);
    }
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
}
