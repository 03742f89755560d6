package org.tensorcache.model.data;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The content digest of a data set's rows, byte for byte the one {@code rows_digest} of {@code
 * python/tensorcache/digests.py} computes: a trainer computes it again from the rows it is given
 * and compares it with the one a fill recorded. It digests what the rows say, not how the file
 * spells it, so the same rows read from JSONL or Arrow give the same value.
 *
 * <p>SHA-256 over every row in order, each the mapping of its {@link #ROW_FIELDS} that are present
 * and not null, encoded ({@code u32} big-endian): a string as {@code s} u32(UTF-8 length) bytes; an
 * integer as {@code i} then its decimal digits as a string; a boolean as {@code t} or {@code f};
 * null as {@code n}; a list as {@code l} u32(count) then each item; a map as {@code m} u32(count)
 * then, by key in code-point order, the key as a string and the value, leaving out null values; a
 * floating-point number as {@code r} then Python's {@code repr()} of it as a string ({@link
 * PythonFloat}).
 */
public final class RowsDigest {
  /** The fields of a row that are digested; the others (ids, scores) are not. */
  public static final List<String> ROW_FIELDS =
      List.of("prompt", "chosen", "rejected", "tools", "chat_template_kwargs");

  private final MessageDigest sha256;

  private RowsDigest() {
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A digest of no rows yet. */
  public static RowsDigest create() {
    return new RowsDigest();
  }

  /** The digest (hex) of text preference rows, in order. */
  public static String ofPreferences(List<PreferenceExample> rows) {
    RowsDigest digest = create();
    for (PreferenceExample row : rows) {
      digest.add(
          Map.of("prompt", row.prompt(), "chosen", row.chosen(), "rejected", row.rejected()));
    }
    return digest.hex();
  }

  /**
   * Adds one row: its {@link #ROW_FIELDS} that are present and not null, with values of the types
   * {@link #encode} takes.
   */
  public RowsDigest add(Map<String, ?> row) {
    Map<String, Object> fields = new LinkedHashMap<>();
    for (String field : ROW_FIELDS) {
      Object value = row.get(field);
      if (value != null) {
        fields.put(field, value);
      }
    }
    encode(fields, sha256);
    return this;
  }

  /**
   * Adds one row read from JSON, its values as Python's {@code json.loads} gives them: numbers with
   * a fraction or an exponent as floats, the others as integers.
   */
  public RowsDigest add(JsonNode row) {
    Map<String, Object> fields = new LinkedHashMap<>();
    for (String field : ROW_FIELDS) {
      JsonNode value = row.get(field);
      if (value != null) {
        fields.put(field, plain(value)); // a JSON null is left out by add(Map)
      }
    }
    return add(fields);
  }

  private static Object plain(JsonNode node) {
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isIntegralNumber()) {
      return node.bigIntegerValue();
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isArray()) {
      List<Object> items = new ArrayList<>(node.size());
      node.forEach(item -> items.add(plain(item)));
      return items;
    }
    if (node.isObject()) {
      Map<String, Object> entries = new LinkedHashMap<>();
      node.properties().forEach(e -> entries.put(e.getKey(), plain(e.getValue())));
      return entries;
    }
    return null; // JSON null
  }

  /** The SHA-256 (hex) of the rows added; the digest starts over after it. */
  public String hex() {
    return HexFormat.of().formatHex(sha256.digest());
  }

  /**
   * Feeds {@code value} in the encoding above: a String, Integer, Long, BigInteger, Double,
   * Boolean, null, List or Map (string keys); anything else is an error naming its type.
   */
  static void encode(Object value, MessageDigest out) {
    if (value == null) {
      out.update((byte) 'n');
    } else if (value instanceof Boolean b) {
      out.update((byte) (b ? 't' : 'f'));
    } else if (value instanceof String s) {
      string(s, out);
    } else if (value instanceof Integer || value instanceof Long || value instanceof BigInteger) {
      out.update((byte) 'i');
      string(value.toString(), out);
    } else if (value instanceof Double d) {
      out.update((byte) 'r');
      string(PythonFloat.repr(d), out);
    } else if (value instanceof Map<?, ?> map) {
      List<Map.Entry<String, Object>> entries = new ArrayList<>();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!(e.getKey() instanceof String key)) {
          throw new IllegalArgumentException(
              "cannot digest a map key of type "
                  + (e.getKey() == null ? "null" : e.getKey().getClass().getSimpleName())
                  + ", expected a String");
        }
        if (e.getValue() != null) {
          entries.add(Map.entry(key, e.getValue()));
        }
      }
      entries.sort((a, b) -> compareCodePoints(a.getKey(), b.getKey()));
      out.update((byte) 'm');
      u32(entries.size(), out);
      for (Map.Entry<String, Object> e : entries) {
        string(e.getKey(), out);
        encode(e.getValue(), out);
      }
    } else if (value instanceof List<?> list) {
      out.update((byte) 'l');
      u32(list.size(), out);
      for (Object item : list) {
        encode(item, out);
      }
    } else {
      throw new IllegalArgumentException(
          "cannot digest a value of type "
              + value.getClass().getSimpleName()
              + ", expected a String, integer, Double, Boolean, null, List or Map");
    }
  }

  /**
   * Orders strings by code point, as Python sorts them; {@link String#compareTo} orders by UTF-16
   * unit, which puts a character above U+FFFF before one in U+E000..U+FFFF.
   */
  static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  private static void string(String s, MessageDigest out) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    out.update((byte) 's');
    u32(bytes.length, out);
    out.update(bytes);
  }

  private static void u32(int n, MessageDigest out) {
    out.update(ByteBuffer.allocate(4).putInt(n).array());
  }
}
