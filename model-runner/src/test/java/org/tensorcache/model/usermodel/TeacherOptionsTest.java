package org.tensorcache.model.usermodel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.data.CompletionExample;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.TopKTeacherRunner;

/** Bad options and rows are refused before any compute, naming the value and what was expected. */
class TeacherOptionsTest {
  private static final Path LLAMA = Fixtures.DIR.resolve("llama");
  private static final Truncation NONE = new Truncation(0, Truncation.Mode.KEEP_START);

  private static String refused(int k, float temperature) {
    return assertThrows(
            IllegalArgumentException.class,
            () -> TeacherModel.open(LLAMA, k, temperature, NONE, BudgetSettings.DEFAULT))
        .getMessage();
  }

  @Test
  void topKOutsideTheVocabularyIsRefused() {
    assertEquals("top-K 0 invalid, expected 1 to the model's vocabulary size 800", refused(0, 1f));
    assertEquals(
        "top-K 801 invalid, expected 1 to the model's vocabulary size 800", refused(801, 1f));
  }

  @Test
  void aTemperatureThatIsNotPositiveAndFiniteIsRefused() {
    assertEquals("temperature 0.0 invalid, expected a finite number > 0", refused(5, 0f));
    assertEquals("temperature -1.0 invalid, expected a finite number > 0", refused(5, -1f));
    assertEquals("temperature NaN invalid, expected a finite number > 0", refused(5, Float.NaN));
    assertEquals(
        "temperature Infinity invalid, expected a finite number > 0",
        refused(5, Float.POSITIVE_INFINITY));
  }

  @Test
  void theIdentityIsTheRunnersAndChangesWithTheOptions() throws Exception {
    try (TeacherModel a = TeacherModel.open(LLAMA, 5, 1f, NONE, BudgetSettings.DEFAULT);
        TeacherModel b = TeacherModel.open(LLAMA, 5, 2f, NONE, BudgetSettings.DEFAULT)) {
      var runner = a.newRunner(DataFormat.COMPLETION_TOKENS);
      var identity = a.identity(DataFormat.COMPLETION_TOKENS);
      assertEquals(runner.id(), identity.id());
      assertEquals(runner.weightsDigest(), identity.weightsDigest());
      assertEquals(runner.fields(), identity.fields());
      assertEquals(new java.util.TreeMap<>(runner.parameters()), identity.parameters());
      assertEquals("2.0", b.identity(DataFormat.COMPLETION_TOKENS).parameters().get("temperature"));
      assertTrue(!identity.equals(b.identity(DataFormat.COMPLETION_TOKENS)));
    }
  }

  @Test
  void theWholeVocabularyLeavesNoTail() throws Exception {
    try (TeacherModel teacher = TeacherModel.open(LLAMA, 800, 1f, NONE, BudgetSettings.DEFAULT)) {
      ExampleSet rows =
          new ExampleSet(
              Path.of("rows"),
              List.of(new TokenizedCompletion(0, new int[] {1, 50, 60}, new int[] {0, 1, 1})),
              "d",
              DataFormat.COMPLETION_TOKENS);
      var out = teacher.newRunner(rows.format()).run(teacher.prepare(rows).examples());
      assertEquals(2, out.tokens(0));
      float[] tails = out.floats("teacher_tail_logp", 0);
      assertEquals(Float.NEGATIVE_INFINITY, tails[0]);
      assertEquals(Float.NEGATIVE_INFINITY, tails[1]);
      int[] ids = out.ints("teacher_ids", 0);
      assertEquals(800 * 2, ids.length);
      assertEquals(800, java.util.Arrays.stream(ids, 0, 800).distinct().count());
    }
  }

  @Test
  void rowsWithoutATrainedTokenAreRefusedByIndex() throws Exception {
    try (TeacherModel teacher = TeacherModel.open(LLAMA, 5, 1f, NONE, BudgetSettings.DEFAULT)) {
      ExampleSet rows =
          new ExampleSet(
              Path.of("rows.jsonl"),
              List.of(
                  new TokenizedCompletion(0, new int[] {1, 50, 60}, new int[] {0, 0, 1}),
                  new TokenizedCompletion(1, new int[] {1, 50, 60}, new int[] {1, 0, 0})),
              "d",
              DataFormat.COMPLETION_TOKENS);
      InvalidRowException e = assertThrows(InvalidRowException.class, () -> teacher.prepare(rows));
      assertEquals(1, e.row());
      assertTrue(
          e.getMessage().startsWith("rows.jsonl row 1: has no completion token"), e.getMessage());
      // the runner refuses it too, before computing the row before it
      TopKTeacherRunner runner = teacher.newRunner(rows.format());
      e = assertThrows(InvalidRowException.class, () -> runner.run(rows.examples()));
      assertEquals(1, e.row());
    }
  }

  @Test
  void aCompletionCutAwayIsRefusedAndOtherRowKindsNamed() throws Exception {
    Truncation eight = new Truncation(8, Truncation.Mode.KEEP_START);
    try (TeacherModel teacher = TeacherModel.open(LLAMA, 5, 1f, eight, BudgetSettings.DEFAULT)) {
      ExampleSet text =
          new ExampleSet(
              Path.of("rows.jsonl"),
              List.of(new CompletionExample(0, "a long prompt that fills eight tokens", " no")),
              "d",
              DataFormat.COMPLETION);
      InvalidRowException e = assertThrows(InvalidRowException.class, () -> teacher.prepare(text));
      assertTrue(e.getMessage().contains("truncation to 8/keep_start"), e.getMessage());
      ExampleSet prefs =
          new ExampleSet(
              Path.of("p.jsonl"),
              List.of(new TokenizedPreference(0, new int[] {1}, new int[] {2}, new int[] {3})),
              "d",
              DataFormat.TOKENS);
      var wrong = assertThrows(IllegalArgumentException.class, () -> teacher.prepare(prefs));
      assertTrue(wrong.getMessage().contains("a teacher takes"), wrong.getMessage());
    }
  }
}
