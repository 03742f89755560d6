package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
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

  /** A float is digested as Python's repr() of it. */
  @Test
  void floatsAsPythonSpellsThem() {
    Map<String, Object> row =
        Map.of(
            "prompt", "p", "chosen", "c", "rejected", "r", "tools", List.of(0.5, 1e-5, -2.5e16, 3));
    assertEquals(
        "e55e56585df0fa1aeccc6a7c5fc9eea89627cad9e31b7c8851df1aa3b5da10c8",
        RowsDigest.create().add(row).hex());
  }

  /** JSON rows digest as the rows python's json.loads gives: 1E2 a float, a big number an int. */
  @Test
  void jsonRowsAsPythonReadsThem() throws Exception {
    ObjectMapper json = new ObjectMapper();
    String first =
        "{\"prompt\": \"p\", \"chosen\": \"c\", \"rejected\": \"r\", \"id\": 7, \"tools\":"
            + " [{\"name\": \"f\", \"t\": 0.25, \"n\": 3, \"big\": 123456789012345678901,"
            + " \"e\": 1E2, \"ok\": true, \"none\": null, \"l\": [1, null, \"x\"]}],"
            + " \"chat_template_kwargs\": {\"enable_thinking\": false}}";
    String second = "{\"prompt\": \"q\", \"chosen\": \"d\", \"rejected\": \"s\", \"tools\": null}";
    assertEquals(
        "9209f319a66b8019239b6b29221924a0027468ca1a87d6ace27b2dd35da8a8a4",
        RowsDigest.create().add(json.readTree(first)).add(json.readTree(second)).hex());
  }

  @Test
  void anotherTypeIsRefusedNamingIt() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RowsDigest.create().add(Map.of("prompt", "p", "tools", List.of(0.5f))));
    assertTrue(e.getMessage().contains("Float"), e.getMessage());
  }
}
