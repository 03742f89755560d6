package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;

/**
 * The header text of a safetensors file: writes it in this project's one canonical form (compact
 * JSON padded with spaces to a multiple of 8 bytes, {@code __metadata__} first, then the tensors in
 * data order with contiguous offsets) and parses a stored one as strict JSON.
 */
public final class SafetensorsJson {
  /** The header key of the string-to-string metadata. */
  public static final String METADATA = "__metadata__";

  private static final JsonMapper JSON =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  private SafetensorsJson() {}

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
    return b.append('}').toString().getBytes(StandardCharsets.US_ASCII);
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
}
