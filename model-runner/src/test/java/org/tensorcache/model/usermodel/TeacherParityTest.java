package org.tensorcache.model.usermodel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.TokenOutput;
import org.tensorcache.model.runner.TopKTeacherRunner;

/**
 * The teacher's top-K equals PyTorch's on the same exported models ({@code expected-topk.json},
 * from {@code scripts/make_topk_fixture.py}): the tokens TRL's SFT preparation trains on, ids
 * exactly, log-probs and tails within {@link #TOLERANCE}, on full-logits and split-head models,
 * prompt-completion and tokenized rows, truncated both ways.
 */
class TeacherParityTest {
  /**
   * On log-probs, absolute below 1 and relative above: the reference runs each row alone and
   * unpadded, here rows are packed and padded (other kernels, other float32 rounding); the largest
   * difference measured is 3.1e-6.
   */
  static final double TOLERANCE = 2e-5;

  static double tolerance(double expected) {
    return TOLERANCE * Math.max(1, Math.abs(expected));
  }

  record Case(JsonNode node) {
    String name() {
      return node.get("name").textValue();
    }

    TeacherModel open(BudgetSettings settings) throws Exception {
      JsonNode max = node.get("max_length");
      Truncation truncation =
          new Truncation(
              max.isNull() ? 0 : max.intValue(),
              Truncation.Mode.parse(node.get("truncation_mode").textValue()));
      return TeacherModel.open(
          Fixtures.DIR.resolve(node.get("model").textValue()),
          node.get("k").intValue(),
          node.get("temperature").floatValue(),
          truncation,
          settings);
    }

    ExampleSet raw() throws Exception {
      return ExampleSet.load(Fixtures.DIR.resolve(node.get("dataset").textValue()));
    }

    /** The rows TRL keeps (some trained token left after truncation). */
    ExampleSet kept() throws Exception {
      ExampleSet raw = raw();
      List<Example> kept = new ArrayList<>();
      for (JsonNode r : node.get("rows")) {
        if (!r.get("dropped").booleanValue()) {
          kept.add(raw.get(r.get("index").longValue()));
        }
      }
      return raw.withExamples(kept, raw.format());
    }
  }

  static List<Case> cases() throws Exception {
    List<Case> out = new ArrayList<>();
    Fixtures.json("expected-topk.json").get("cases").forEach(c -> out.add(new Case(c)));
    return out;
  }

  @Test
  void everyCaseEqualsPyTorch() throws Exception {
    int tokens = 0;
    double worst = 0;
    boolean split = false;
    boolean full = false;
    for (Case c : cases()) {
      try (TeacherModel teacher = c.open(BudgetSettings.DEFAULT)) {
        ExampleSet rows = teacher.prepare(c.kept());
        TopKTeacherRunner runner = teacher.newRunner(rows.format());
        split |= runner.path().contains("head.pt");
        full |= !runner.path().contains("head.pt");
        TokenOutput out = runner.run(rows.examples());
        int k = c.node().get("k").intValue();
        for (int i = 0; i < out.size(); i++) {
          JsonNode e = c.node().get("rows").get((int) out.index(i));
          String where = c.name() + " row " + out.index(i);
          TokenizedCompletion row = (TokenizedCompletion) rows.examples().get(i);
          assertArrayEquals(Fixtures.ints(e.get("input_ids")), row.ids(), where + " TRL's ids");
          int n = e.get("targets").size();
          assertEquals(n, out.tokens(i), where + " trained tokens");
          int[] ids = out.ints("teacher_ids", i);
          float[] logps = out.floats("teacher_logps", i);
          float[] tails = out.floats("teacher_tail_logp", i);
          for (int t = 0; t < n; t++) {
            assertArrayEquals(
                Fixtures.ints(e.get("ids").get(t)),
                java.util.Arrays.copyOfRange(ids, t * k, t * k + k),
                where + " token " + t);
            for (int j = 0; j < k; j++) {
              double expected = e.get("logps").get(t).get(j).doubleValue();
              worst = Math.max(worst, Math.abs(expected - logps[t * k + j]));
              assertEquals(expected, logps[t * k + j], tolerance(expected), where + " token " + t);
            }
            JsonNode tail = e.get("tails").get(t);
            if (tail.isTextual()) {
              assertEquals(Float.NEGATIVE_INFINITY, tails[t], where + " token " + t + " tail");
            } else {
              worst = Math.max(worst, Math.abs(tail.doubleValue() - tails[t]));
              assertEquals(
                  tail.doubleValue(),
                  tails[t],
                  tolerance(tail.doubleValue()),
                  where + " token " + t);
            }
          }
          tokens += n;
        }
      }
    }
    System.err.println("teacher parity: " + tokens + " tokens, largest difference " + worst);
    assertTrue(split && full, "both model formats must be checked");
    assertTrue(tokens >= 500, "too few tokens checked: " + tokens);
  }

  @Test
  void aRowWithNoTrainedTokenLeftIsRefusedByIndexBeforeAnyCompute() throws Exception {
    for (Case c : cases()) {
      JsonNode dropped = null;
      for (JsonNode r : c.node().get("rows")) {
        if (r.get("dropped").booleanValue() && dropped == null) {
          dropped = r;
        }
      }
      if (dropped == null) {
        continue;
      }
      try (TeacherModel teacher = c.open(BudgetSettings.DEFAULT)) {
        ExampleSet raw = c.raw();
        InvalidRowException e =
            assertThrows(InvalidRowException.class, () -> teacher.prepare(raw), c.name());
        assertEquals(dropped.get("index").longValue(), e.row(), e.getMessage());
        assertTrue(e.getMessage().contains("no completion token"), e.getMessage());
        return;
      }
    }
    throw new AssertionError("no case has a row TRL drops");
  }

  @Test
  void sameRowSameBitsWhateverTheBatchAround() throws Exception {
    for (Case c : cases()) {
      ExampleSet rows;
      TokenOutput alone;
      try (TeacherModel teacher = c.open(BudgetSettings.DEFAULT)) {
        rows = teacher.prepare(c.kept());
        alone = teacher.newRunner(rows.format()).run(rows.examples());
      }
      List<Example> shuffled = new ArrayList<>(rows.examples());
      Collections.shuffle(shuffled, new Random(5));
      // a small budget: a few sequences a pass, other neighbours and paddings for each row
      try (TeacherModel small =
          c.open(new BudgetSettings(64, BudgetSettings.DEFAULT.memoryBound()))) {
        TokenOutput mixed = small.newRunner(rows.format()).run(shuffled);
        for (int i = 0; i < mixed.size(); i++) {
          int original = rows.examples().indexOf(shuffled.get(i));
          for (int f = 0; f < 3; f++) {
            Object a = alone.value(f, original);
            Object b = mixed.value(f, i);
            String where = c.name() + " row " + mixed.index(i) + " field " + f;
            if (a instanceof int[] x) {
              assertArrayEquals(x, (int[]) b, where);
            } else {
              assertArrayEquals((float[]) a, (float[]) b, where);
            }
          }
        }
      }
    }
  }
}
