package org.tensorcache.store.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SafetensorsJsonTest {
  private static final List<TensorInfo> TENSORS =
      List.of(
          new TensorInfo("chosen_logp", "F32", new long[] {1024}),
          new TensorInfo("features", "F32", new long[] {1024, 3, 128}),
          new TensorInfo("__present__", "U8", new long[] {128}));

  @Test
  void theDirectEncodingIsByteForByteJacksons() {
    StringBuilder printable = new StringBuilder();
    for (char c = 0x20; c <= 0x7e; c++) {
      printable.append(c);
    }
    List<String> values =
        List.of("", "0", "tensorcache-segment/1", "ref-0123456789abcdef", printable.toString());
    for (String v : values) {
      Map<String, String> meta = new LinkedHashMap<>();
      meta.put("format", v);
      meta.put("k" + v.length(), "x");
      assertArrayEquals(padded(SafetensorsJson.jacksonJson(TENSORS, meta)), encode(meta), v);
    }
  }

  @Test
  void stringsThatNeedEscapesGoThroughJackson() {
    for (String v : List.of("quote\"d", "back\\slash", "tab\there", "caf\u00e9", "\u2028")) {
      Map<String, String> meta = Map.of("name", v);
      byte[] jackson = padded(SafetensorsJson.jacksonJson(TENSORS, meta));
      assertArrayEquals(jackson, encode(meta), v);
      String text = new String(jackson, StandardCharsets.UTF_8).trim();
      assertEquals('}', text.charAt(text.length() - 1));
    }
  }

  private static byte[] encode(Map<String, String> meta) {
    return SafetensorsJson.encode(TENSORS, meta);
  }

  private static byte[] padded(byte[] json) {
    byte[] p = java.util.Arrays.copyOf(json, (json.length + 7) & ~7);
    java.util.Arrays.fill(p, json.length, p.length, (byte) ' ');
    return p;
  }
}
