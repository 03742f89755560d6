package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The values python/tensorcache/digests.py's {@code rows_digest} gives for the same rows. */
class RowsDigestTest {
  @Test
  void noRowsIsTheDigestOfNothing() {
    assertEquals(
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        RowsDigest.ofPreferences(List.of()));
  }

  @Test
  void oneTextRow() {
    assertEquals(
        "52e23b337a161856e3aea1b7c39a6d5359d04a1113eb1455b2135e7f6c955b05",
        RowsDigest.ofPreferences(List.of(new PreferenceExample(0, "Hi", " yes", " no"))));
  }

  @Test
  void otherFieldsAndNullsAreLeftOutAndTextIsUtf8() {
    Map<String, Object> second = new HashMap<>();
    second.put("prompt", "Größe \"q\"\n");
    second.put("chosen", "😀");
    second.put("rejected", "");
    second.put("id", null);
    String expected = "2bd730fd750b8168557d7136de150ea5b396bc3cf04c610420c5518369ca7d6e";
    String rows =
        RowsDigest.create()
            .add(Map.of("prompt", "Hi", "chosen", " yes", "rejected", " no", "score", 3))
            .add(second)
            .hex();
    assertEquals(expected, rows);
    assertEquals(
        expected,
        RowsDigest.ofPreferences(
            List.of(
                new PreferenceExample(0, "Hi", " yes", " no"),
                new PreferenceExample(1, "Größe \"q\"\n", "😀", ""))));
  }

  /** rows_digest of a row with tools and chat_template_kwargs of every kind of value. */
  @Test
  void listsMapsIntegersAndBooleans() {
    Map<String, Object> tool = new HashMap<>();
    tool.put("name", "f");
    tool.put("n", 12);
    tool.put("ok", true);
    tool.put("x", null);
    tool.put("neg", -5L);
    Map<String, Object> row = new HashMap<>();
    row.put("prompt", "a");
    row.put("chosen", "b");
    row.put("rejected", "c");
    row.put("tools", List.of(tool));
    row.put("chat_template_kwargs", Map.of("enable", false, "b", Arrays.asList("x", null)));
    assertEquals(
        "f8c1a7226d353ff20d1141cf1975aedfdda0eb3896a7323bd235fdea8d05625c",
        RowsDigest.create().add(row).hex());
  }

  /** U+FF01 sorts before U+1F600 by code point, after it by UTF-16 unit. */
  @Test
  void keysAreOrderedByCodePoint() {
    Map<String, Object> kwargs =
        Map.of("\uff01", 1, "😀", 2, "big", new BigInteger("12345678901234567890"));
    Map<String, Object> row =
        Map.of("prompt", "p", "chosen", "c", "rejected", "r", "chat_template_kwargs", kwargs);
    assertEquals(
        "af89210a2af5bd302d2421251eb0a053a8e2c6df900be13d8f46d554d5ceda3b",
        RowsDigest.create().add(row).hex());
    assertTrue(RowsDigest.compareCodePoints("\uff01", "😀") < 0);
    assertTrue(RowsDigest.compareCodePoints("ab", "abc") < 0);
  }

  @Test
  void aFloatIsRefusedNamingItsType() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RowsDigest.create().add(Map.of("prompt", "p", "tools", List.of(0.5))));
    assertTrue(e.getMessage().contains("Double"), e.getMessage());
  }
}
