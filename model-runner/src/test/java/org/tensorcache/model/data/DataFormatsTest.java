package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataFormatsTest {
  @TempDir Path dir;

  private Path file(String name, String... lines) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    return f;
  }

  @Test
  void gzipReadsAsThePlainFileWithTheSameDigest() throws Exception {
    Path plain = file("p.jsonl", "{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"c\"}");
    Path gz = dir.resolve("p.jsonl.gz");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gz))) {
      out.write(Files.readAllBytes(plain));
    }
    ExampleSet a = ExampleSet.load(plain);
    ExampleSet b = ExampleSet.load(gz);
    assertEquals(a.examples(), b.examples());
    assertEquals(a.digest(), b.digest());
  }

  @Test
  void tokenRowsAreDetectedAndTheHeaderIsNoRow() throws Exception {
    Path f =
        file(
            "t.jsonl",
            "{\"tensorcache\":{\"kind\":\"prepared\"}}",
            "{\"prompt_ids\":[1,2],\"chosen_ids\":[3],\"rejected_ids\":[4,5]}",
            "{\"prompt_ids\":[],\"chosen_ids\":[6],\"rejected_ids\":[7]}");
    ExampleSet data = ExampleSet.load(f);
    assertEquals(DataFormat.TOKENS, data.format());
    assertEquals(2, data.size());
    TokenizedPreference first = (TokenizedPreference) data.get(0);
    assertEquals(0, first.index());
    assertArrayEquals(new int[] {1, 2}, first.promptIds());
    assertArrayEquals(new int[] {4, 5}, first.rejectedIds());
    assertEquals(1, data.get(1).index());
  }

  @Test
  void theHeaderIsCoveredByTheDigest() throws Exception {
    String row = "{\"prompt_ids\":[1],\"chosen_ids\":[3],\"rejected_ids\":[4]}";
    String a =
        ExampleSet.load(file("a.jsonl", "{\"tensorcache\":{\"source_sha256\":\"1\"}}", row))
            .digest();
    String b =
        ExampleSet.load(file("b.jsonl", "{\"tensorcache\":{\"source_sha256\":\"2\"}}", row))
            .digest();
    assertTrue(!a.equals(b), "a header of another source must make another cache");
  }

  @Test
  void conversationalRowsNameTheRowAndThePreparationScript() throws Exception {
    Path f =
        file(
            "c.jsonl",
            "{\"prompt\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"chosen\":[{\"role\":\"assistant\",\"content\":\"a\"}],"
                + "\"rejected\":[{\"role\":\"assistant\",\"content\":\"b\"}]}");
    var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f));
    assertEquals(1, e.line());
    assertTrue(e.getMessage().startsWith(f + " line 1: "), e.getMessage());
    assertTrue(e.getMessage().contains("scripts/prepare_dataset.py"), e.getMessage());
    var forced =
        assertThrows(MalformedDataException.class, () -> ExampleSet.load(f, DataFormat.TEXT));
    assertTrue(
        forced.getMessage().contains("field 'prompt' is a list of messages"), forced.getMessage());
  }

  @Test
  void badTokenRowsNameLineAndField() throws Exception {
    String[][] cases = {
      {
        "{\"prompt_ids\":[1],\"chosen_ids\":[],\"rejected_ids\":[4]}", "field 'chosen_ids' is empty"
      },
      {
        "{\"prompt_ids\":[1],\"chosen_ids\":[2],\"rejected_ids\":[-4]}",
        "field 'rejected_ids' element 0 is -4, expected a token id >= 0"
      },
      {
        "{\"prompt_ids\":[1],\"chosen_ids\":[2.5],\"rejected_ids\":[4]}",
        "field 'chosen_ids' element 0 is 2.5"
      },
      {
        "{\"prompt_ids\":\"1 2\",\"chosen_ids\":[2],\"rejected_ids\":[4]}",
        "field 'prompt_ids' is STRING, expected a list of token ids"
      },
      {"{\"prompt_ids\":[1],\"chosen_ids\":[2]}", "field 'rejected_ids' is missing"},
    };
    for (String[] c : cases) {
      Path f =
          file("bad.jsonl", "{\"prompt_ids\":[1],\"chosen_ids\":[3],\"rejected_ids\":[4]}", c[0]);
      var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(f), c[0]);
      assertEquals(2, e.line(), c[0]);
      assertTrue(e.getMessage().contains(c[1]), e.getMessage());
    }
  }

  @Test
  void forcedFormatAndUnknownShapesAreErrors() throws Exception {
    Path text = file("t.jsonl", "{\"prompt\":\"a\",\"chosen\":\"b\",\"rejected\":\"c\"}");
    var e =
        assertThrows(MalformedDataException.class, () -> ExampleSet.load(text, DataFormat.TOKENS));
    assertTrue(e.getMessage().contains("field 'prompt_ids' is missing"), e.getMessage());
    Path odd = file("o.jsonl", "{\"question\":\"a\"}");
    var unknown = assertThrows(MalformedDataException.class, () -> ExampleSet.load(odd));
    assertTrue(unknown.getMessage().contains("fields found: [question]"), unknown.getMessage());
    assertThrows(MalformedDataException.class, () -> ExampleSet.load(file("e.jsonl")));
    var format = assertThrows(IllegalArgumentException.class, () -> DataFormat.parse("csv"));
    assertEquals(
        "data format 'csv' unknown, expected one of [text, tokens, conversational, document, completion,"
            + " completion_tokens]",
        format.getMessage());
  }

  @Test
  void documentRows() throws Exception {
    ExampleSet data = ExampleSet.load(file("d.jsonl", "{\"text\":\"héllo\"}", "{\"text\":\"x\"}"));
    assertEquals(DataFormat.DOCUMENT, data.format());
    assertEquals(new DocumentExample(1, "x"), data.get(1));
  }
}
