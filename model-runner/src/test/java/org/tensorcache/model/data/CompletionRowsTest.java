package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prompt-completion and tokenized language-modeling rows, as a teacher takes them. */
class CompletionRowsTest {
  @TempDir Path dir;

  private Path file(String... lines) throws Exception {
    Path f = dir.resolve("rows.jsonl");
    Files.writeString(f, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    return f;
  }

  @Test
  void promptCompletionRowsAreDetected() throws Exception {
    ExampleSet data = ExampleSet.load(file("{\"prompt\":\"a\",\"completion\":\"b\"}"));
    assertEquals(DataFormat.COMPLETION, data.format());
    assertEquals(new CompletionExample(0, "a", "b"), data.get(0));
  }

  @Test
  void tokenizedRowsAreDetectedAfterTheHeader() throws Exception {
    ExampleSet data =
        ExampleSet.load(
            file(
                "{\"tensorcache\":{\"kind\":\"prepared\"}}",
                "{\"input_ids\":[5,6,7],\"completion_mask\":[0,1,1]}"));
    assertEquals(DataFormat.COMPLETION_TOKENS, data.format());
    TokenizedCompletion row = (TokenizedCompletion) data.get(0);
    assertArrayEquals(new int[] {5, 6, 7}, row.ids());
    assertArrayEquals(new int[] {0, 1, 1}, row.completionMask());
  }

  @Test
  void aMaskOfAnotherLengthOrValueNamesTheLine() throws Exception {
    var e =
        assertThrows(
            MalformedDataException.class,
            () -> ExampleSet.load(file("{\"input_ids\":[5,6,7],\"completion_mask\":[0,1]}")));
    assertTrue(
        e.getMessage().contains("line 1")
            && e.getMessage().contains("2 completion_mask values for 3 input_ids"),
        e.getMessage());
    e =
        assertThrows(
            MalformedDataException.class,
            () -> ExampleSet.load(file("{\"input_ids\":[5,6],\"completion_mask\":[0,2]}")));
    assertTrue(
        e.getMessage().contains("completion_mask element 1 is 2, expected 0 or 1"), e.getMessage());
  }

  @Test
  void messagesRowsPointToThePreparationScript() throws Exception {
    for (String row :
        new String[] {
          "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
          "{\"prompt\":[{\"role\":\"user\",\"content\":\"hi\"}],"
              + "\"completion\":[{\"role\":\"assistant\",\"content\":\"yo\"}]}"
        }) {
      var e = assertThrows(MalformedDataException.class, () -> ExampleSet.load(file(row)));
      assertTrue(e.getMessage().contains("scripts/prepare_dataset.py"), e.getMessage());
    }
  }
}
