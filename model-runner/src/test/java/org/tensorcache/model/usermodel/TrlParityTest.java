package org.tensorcache.model.usermodel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;

/**
 * The values of a user's traced model equal those TRL 1.13's DPOTrainer computed with the eager
 * model on the same rows (text, conversational through the preparation script, pre-tokenized,
 * truncated both ways, rows over 512 tokens, non-ASCII), and the Java side tokenizes text rows to
 * exactly TRL's ids.
 */
class TrlParityTest {

  @Test
  void everyCaseEqualsTrl() throws Exception {
    assertTrue(checkAll(Fixtures.cases()) >= 60, "too few rows checked");
  }

  /**
   * The same with the body and the output head traced apart, on the same models, and on a model of
   * a 32,768-token vocabulary with skewed lengths: several passes and head chunks a batch.
   */
  @Test
  void everyCaseOnASplitHeadEqualsTrl() throws Exception {
    assertTrue(checkAll(Fixtures.splitCases()) >= 150, "too few rows checked");
  }

  private static int checkAll(Iterable<Fixtures.Case> cases) throws Exception {
    int checked = 0;
    for (Fixtures.Case c : cases) {
      try (UserModel user =
          UserModel.open(c.modelDir(), UserModel.Runner.LOGPROB, c.truncation())) {
        ExampleSet rows = user.prepare(ExampleSet.load(c.dataset(), c.format()));
        JsonNode expected = c.rows();
        assertEquals(expected.size(), rows.size(), c.name());
        for (JsonNode e : expected) {
          TokenizedPreference row = (TokenizedPreference) rows.get(e.get("index").longValue());
          String where = c.name() + " row " + row.index();
          assertArrayEquals(Fixtures.ints(e.get("prompt_ids")), row.promptIds(), where);
          assertArrayEquals(Fixtures.ints(e.get("chosen_ids")), row.chosenIds(), where);
          assertArrayEquals(Fixtures.ints(e.get("rejected_ids")), row.rejectedIds(), where);
        }
        try (ModelRunner runner = user.newRunner(rows.format())) {
          RunnerOutput out = runner.run(rows.examples());
          for (JsonNode e : expected) {
            int i = e.get("index").intValue();
            String where = c.name() + " row " + i;
            assertEquals(
                e.get("chosen_tokens").intValue(), (int) out.value("chosen_tokens", i)[0], where);
            assertEquals(
                e.get("rejected_tokens").intValue(),
                (int) out.value("rejected_tokens", i)[0],
                where);
            double chosen = e.get("chosen_logp").doubleValue();
            double rejected = e.get("rejected_logp").doubleValue();
            assertEquals(chosen, out.value("chosen_logp", i)[0], Fixtures.tolerance(chosen), where);
            assertEquals(
                rejected, out.value("rejected_logp", i)[0], Fixtures.tolerance(rejected), where);
            checked++;
          }
        }
      }
    }
    return checked;
  }

  @Test
  void longRowsAndDroppedRowsArePartOfTheFixtures() throws Exception {
    boolean long512 = false;
    boolean dropped = false;
    for (Fixtures.Case c : Fixtures.cases()) {
      for (JsonNode e : c.rows()) {
        long512 |= e.get("prompt_ids").size() + e.get("chosen_ids").size() > 512;
        dropped |= e.get("dropped").booleanValue();
      }
    }
    assertTrue(long512, "a row over 512 tokens (DJL's default truncation) must be checked");
    assertTrue(dropped, "a row TRL drops under keep_start must be checked");
  }

  @Test
  void sameRowSameValueWhateverTheBatchAroundAndBitsOnAnyThread() throws Exception {
    Fixtures.Case c = Fixtures.cases().iterator().next();
    try (UserModel user = UserModel.open(c.modelDir(), UserModel.Runner.LOGPROB, c.truncation())) {
      ExampleSet rows = user.prepare(ExampleSet.load(c.dataset(), c.format()));
      ModelRunner runner = user.newRunner(rows.format());
      RunnerOutput inOrder = runner.run(rows.examples());
      RunnerOutput again = runner.run(rows.examples());
      var pool = java.util.concurrent.Executors.newSingleThreadExecutor();
      RunnerOutput there;
      try {
        there = pool.submit(() -> runner.run(rows.examples())).get();
      } finally {
        pool.shutdown();
      }
      List<Example> shuffled = new ArrayList<>(rows.examples());
      Collections.shuffle(shuffled, new Random(3));
      RunnerOutput mixed;
      // other passes around each row: a small budget packs a few sequences at a time
      try (UserModel small =
          UserModel.open(
              c.modelDir(),
              UserModel.Runner.LOGPROB,
              c.truncation(),
              DType.F32,
              new BudgetSettings(96, BudgetSettings.DEFAULT.memoryBound()))) {
        small.prepare(ExampleSet.load(c.dataset(), c.format()));
        mixed = small.newRunner(rows.format()).run(shuffled);
      }
      for (int row = 0; row < inOrder.size(); row++) {
        for (int f = 0; f < 4; f++) {
          assertArrayEquals(inOrder.value(f, row), again.value(f, row), "same input, same bits");
          assertArrayEquals(
              inOrder.value(f, row), there.value(f, row), "another thread, same bits");
        }
      }
      for (int row = 0; row < mixed.size(); row++) {
        int original = (int) mixed.index(row);
        for (int f = 0; f < 4; f++) {
          float expected = inOrder.value(f, original)[0];
          assertEquals(expected, mixed.value(f, row)[0], Fixtures.tolerance(expected));
        }
      }
    }
  }
}
