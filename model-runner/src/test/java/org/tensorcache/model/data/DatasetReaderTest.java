package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetReaderTest {
  @TempDir Path dir;

  private Path file(String... lines) throws Exception {
    Path f = dir.resolve("prefs.jsonl");
    Files.writeString(f, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    return f;
  }

  @Test
  void indexIsLineNumberAndDigestIsTheFilesSha256() throws Exception {
    Path f =
        file(
            "{\"prompt\":\"1+1=\",\"chosen\":\"2\",\"rejected\":\"3\"}",
            "{\"prompt\":\"p\",\"chosen\":\"c \\\"q\\\"\",\"rejected\":\"r\",\"extra\":1}");
    ExampleSet data = ExampleSet.load(f);
    assertEquals(2, data.size());
    assertEquals(new PreferenceExample(0, "1+1=", "2", "3"), data.get(0));
    assertEquals(new PreferenceExample(1, "p", "c \"q\"", "r"), data.get(1));
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f));
    assertEquals(HexFormat.of().formatHex(sha), data.digest());
  }

  @Test
  void digestChangesWithContent() throws Exception {
    String a =
        ExampleSet.load(file("{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"c\"}")).digest();
    String b =
        ExampleSet.load(file("{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"d\"}")).digest();
    assertNotEquals(a, b);
  }

  @Test
  void anEmptyDataSetIsNamedAsEmpty() throws Exception {
    Path empty = dir.resolve("prefs.jsonl");
    Files.writeString(empty, "", StandardCharsets.UTF_8);
    var e = assertThrows(EmptyDataSetException.class, () -> ExampleSet.load(empty));
    assertEquals(
        "data set " + empty + " is empty: expected one JSON object per line", e.getMessage());
  }

  @Test
  void missingFieldNamesLineAndField() throws Exception {
    Path f =
        file(
            "{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"c\"}",
            "{\"prompt\":\"a\",\"chosen\":\"b\"}");
    var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f));
    assertEquals(2, e.line());
    assertEquals(f + " line 2: field 'rejected' is missing, expected a string", e.getMessage());
  }

  @Test
  void wrongTypeNamesLineAndField() throws Exception {
    Path f = file("{\"prompt\":\"a\",\"chosen\":5,\"rejected\":\"c\"}");
    var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f));
    assertEquals(f + " line 1: field 'chosen' is NUMBER, expected a string", e.getMessage());
  }

  @Test
  void invalidJsonAndBlankLinesAreErrors() throws Exception {
    for (String bad : List.of("{\"prompt\":\"a\",", "[1,2]", "", "{} {}")) {
      Path f = file("{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"c\"}", bad);
      var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f), bad);
      assertEquals(2, e.line(), bad);
      assertTrue(e.getMessage().startsWith(f + " line 2: "), e.getMessage());
    }
  }

  @Test
  void invalidUtf8IsAnError() throws Exception {
    Path f = dir.resolve("bad.jsonl");
    Files.write(f, new byte[] {'{', '"', 'p', (byte) 0xC3, '"', '}', '\n'});
    var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f));
    assertTrue(e.getMessage().contains("not valid UTF-8"), e.getMessage());
  }

  @Test
  void theHeaderLineIsNoRowAndItsScalarsAreKept() throws Exception {
    Path f =
        file(
            "{\"tensorcache\":{\"kind\":\"prepared\",\"rows\":1,\"source\":\"d.jsonl\","
                + "\"rows_sha256\":\"ab\",\"chat_template_sha256\":null,\"more\":{\"x\":1}}}",
            "{\"prompt_ids\":[1],\"chosen_ids\":[2],\"rejected_ids\":[3]}");
    ExampleSet data = ExampleSet.load(f);
    assertEquals(1, data.size());
    assertEquals(
        java.util.Map.of("kind", "prepared", "rows", "1", "source", "d.jsonl", "rows_sha256", "ab"),
        data.header());
    ExampleSet same = data.withExamples(data.examples(), data.format());
    assertEquals(data.header(), same.header());
    assertTrue(ExampleSet.load(file("{\"text\":\"t\"}")).header().isEmpty());
  }
}
