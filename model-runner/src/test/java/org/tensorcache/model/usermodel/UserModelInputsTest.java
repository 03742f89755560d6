package org.tensorcache.model.usermodel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.MalformedDataException;
import org.tensorcache.model.hf.HfTokenizer;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.Truncation;

/**
 * DJL's tokenizer gives Python's ids for every fixture string, and every input a user's model
 * cannot take stops the job before anything is computed, with an error that names what is wrong.
 */
class UserModelInputsTest {
  private static final Path LLAMA = Fixtures.DIR.resolve("llama");
  private static final Truncation NONE = new Truncation(0, Truncation.Mode.KEEP_START);

  @TempDir Path dir;

  @Test
  void tokenIdsEqualPythonsForEveryFixtureString() throws Exception {
    JsonNode check = Fixtures.json("tokenizer_check.json");
    int n = 0;
    try (HfTokenizer tokenizer = HfTokenizer.load(LLAMA.resolve("tokenizer.json"))) {
      for (JsonNode c : check.get("cases")) {
        String text = c.get("text").textValue();
        assertArrayEquals(
            Fixtures.ints(c.get("with_special_tokens")), tokenizer.encode(text), text);
        assertArrayEquals(
            Fixtures.ints(c.get("without_special_tokens")), tokenizer.encodePlain(text), text);
        n++;
      }
      assertEquals(800, tokenizer.vocabSize());
    }
    assertTrue(n > 50, n + " strings");
  }

  private Path rows(String... lines) throws Exception {
    Path f = dir.resolve("rows.jsonl");
    Files.writeString(f, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    return f;
  }

  private InvalidRowException rejected(Path data, Truncation truncation) throws Exception {
    try (UserModel user = UserModel.open(LLAMA, UserModel.Runner.LOGPROB, truncation)) {
      ExampleSet raw = ExampleSet.load(data);
      return assertThrows(InvalidRowException.class, () -> user.prepare(raw));
    }
  }

  @Test
  void anIdOutsideTheVocabularyNamesRowFieldAndId() throws Exception {
    Path data =
        rows(
            "{\"prompt_ids\":[1,5],\"chosen_ids\":[7],\"rejected_ids\":[8]}",
            "{\"prompt_ids\":[1,5],\"chosen_ids\":[7],\"rejected_ids\":[8,800]}");
    InvalidRowException e = rejected(data, NONE);
    assertEquals(1, e.row());
    assertEquals(
        data
            + " row 1: field 'rejected_ids' token 1 is id 800, outside the model's vocabulary"
            + " [0, 800)",
        e.getMessage());
  }

  @Test
  void aRowLongerThanThePositionsNamesItsLengthUnlessCut() throws Exception {
    String longPrompt = "[" + "5,".repeat(1100) + "5]";
    Path data = rows("{\"prompt_ids\":" + longPrompt + ",\"chosen_ids\":[7],\"rejected_ids\":[8]}");
    InvalidRowException e = rejected(data, NONE);
    assertEquals(
        data
            + " row 0: prompt + 'chosen' is 1102 tokens, more than the model's 1024 positions"
            + " (cut it with --max-length 1024)",
        e.getMessage());
    try (UserModel user =
        UserModel.open(
            LLAMA, UserModel.Runner.LOGPROB, new Truncation(1024, Truncation.Mode.KEEP_END))) {
      ExampleSet rows = user.prepare(ExampleSet.load(data));
      assertEquals(1, rows.size(), "keep_end cuts it to the positions");
      assertEquals(0, user.droppedRows(rows));
    }
  }

  @Test
  void emptyCompletionsAndWrongRowKindsAreNamed() throws Exception {
    try (UserModel user = UserModel.open(LLAMA, UserModel.Runner.LOGPROB, NONE)) {
      Path docs = rows("{\"text\":\"hello\"}");
      var kind =
          assertThrows(IllegalArgumentException.class, () -> user.prepare(ExampleSet.load(docs)));
      assertTrue(
          kind.getMessage().contains("has document rows (row 0), runner 'logprob' takes"),
          kind.getMessage());
    }
    try (UserModel user =
        UserModel.open(Fixtures.DIR.resolve("encoder"), UserModel.Runner.EMBEDDING, NONE)) {
      Path empty = rows("{\"text\":\"a\"}", "{\"text\":\"\"}");
      // the encoder's tokenizer adds BOS even to "": the row has one token and is taken
      assertEquals(2, user.prepare(ExampleSet.load(empty)).size());
    }
    var dataError =
        assertThrows(
            MalformedDataException.class,
            () ->
                ExampleSet.load(
                    rows("{\"prompt_ids\":[1],\"chosen_ids\":[],\"rejected_ids\":[2]}")));
    assertTrue(
        dataError.getMessage().contains("field 'chosen_ids' is empty"), dataError.getMessage());
  }

  @Test
  void aConversationalFileNamesTheRowAndThePreparationScript() throws Exception {
    var e =
        assertThrows(
            MalformedDataException.class,
            () -> ExampleSet.load(Fixtures.DIR.resolve("data/conversational.jsonl")));
    assertEquals(1, e.line());
    assertTrue(
        e.getMessage().contains("scripts/prepare_dataset.py --model-dir DIR"), e.getMessage());
  }

  @Test
  void aModelWhoseOutputIsNoLogitsOverTheVocabularyIsRefusedAtLoad() throws Exception {
    Path copy = Files.createDirectories(dir.resolve("encoder-as-lm"));
    for (String f : new String[] {"model.pt", "tokenizer.json"}) {
      Files.copy(Fixtures.DIR.resolve("encoder").resolve(f), copy.resolve(f));
    }
    try (UserModel user = UserModel.open(copy, UserModel.Runner.LOGPROB, NONE)) {
      var e = assertThrows(IllegalArgumentException.class, user::model);
      assertTrue(
          e.getMessage()
              .matches(
                  ".*model\\.pt returned float32 \\(1, 2, 32\\) for a 1x2 input, expected"
                      + " float32 \\[1, 2, V\\] logits with V >= the tokenizer's 800 ids"),
          e.getMessage());
    }
    var task =
        assertThrows(
            IllegalArgumentException.class,
            () -> UserModel.open(Fixtures.DIR.resolve("encoder"), UserModel.Runner.LOGPROB, NONE));
    assertTrue(
        task.getMessage().contains("was exported as task 'hidden-states'"), task.getMessage());
    var missing =
        assertThrows(
            IllegalArgumentException.class,
            () -> UserModel.open(dir, UserModel.Runner.LOGPROB, NONE));
    assertTrue(
        missing.getMessage().contains("has no model: expected body.pt and head.pt, or model.pt"),
        missing.getMessage());
  }

  @Test
  void aDirectoryMadeByOtherMeansWorksFromTheModelAndTokenizerFiles() throws Exception {
    Path plain = Files.createDirectories(dir.resolve("plain-llama"));
    for (String f : new String[] {"model.pt", "tokenizer.json", "tokenizer_config.json"}) {
      Files.copy(LLAMA.resolve(f), plain.resolve(f));
    }
    Fixtures.Case c = Fixtures.cases().iterator().next();
    assertEquals("llama-text", c.name());
    try (UserModel user = UserModel.open(plain, UserModel.Runner.LOGPROB, c.truncation())) {
      ExampleSet rows = user.prepare(ExampleSet.load(c.dataset(), c.format()));
      var out = user.newRunner(rows.format()).run(rows.examples());
      for (JsonNode e : c.rows()) {
        int i = e.get("index").intValue();
        double chosen = e.get("chosen_logp").doubleValue();
        assertEquals(chosen, out.value("chosen_logp", i)[0], Fixtures.tolerance(chosen));
      }
    }
    // without tokenizer_config.json the EOS text TRL appends is unknown: text rows are refused
    Files.delete(plain.resolve("tokenizer_config.json"));
    try (UserModel user = UserModel.open(plain, UserModel.Runner.LOGPROB, c.truncation())) {
      ExampleSet text = ExampleSet.load(c.dataset(), c.format());
      var e = assertThrows(IllegalArgumentException.class, () -> user.prepare(text));
      assertTrue(e.getMessage().contains("names no eos_token"), e.getMessage());
      ExampleSet tokens = ExampleSet.load(Fixtures.DIR.resolve("data/tokens.jsonl"));
      assertEquals(12, user.prepare(tokens).size(), "token rows need no EOS text");
    }
  }

  @Test
  void encoderMeansEqualTheEagerModels() throws Exception {
    JsonNode expected = Fixtures.json("expected-embedding.json");
    try (UserModel user =
        UserModel.open(Fixtures.DIR.resolve("encoder"), UserModel.Runner.EMBEDDING, NONE)) {
      ExampleSet rows = user.prepare(ExampleSet.load(Fixtures.DIR.resolve("data/embedding.jsonl")));
      var out = user.newRunner(rows.format()).run(rows.examples());
      assertEquals("embedding", out.fields().get(0).name());
      for (JsonNode e : expected.get("rows")) {
        int i = e.get("index").intValue();
        assertArrayEquals(
            Fixtures.ints(e.get("ids")),
            ((org.tensorcache.model.data.TokenizedDocument) rows.get(i)).ids(),
            "row " + i);
        float[] got = out.value("embedding", i);
        assertEquals(e.get("embedding").size(), got.length);
        for (int k = 0; k < got.length; k++) {
          double v = e.get("embedding").get(k).doubleValue();
          assertEquals(v, got[k], Fixtures.tolerance(v), "row " + i + " element " + k);
        }
      }
    }
  }
}
