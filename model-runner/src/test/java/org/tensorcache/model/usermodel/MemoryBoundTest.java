package org.tensorcache.model.usermodel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;

/**
 * A row whose forward pass alone would take more than the memory bound is refused while the data
 * set is prepared, before the model is even loaded, naming the row, its tokens and the bound.
 */
class MemoryBoundTest {
  private static final Truncation NONE = new Truncation(0, Truncation.Mode.KEEP_START);

  @Test
  void aRowThatCannotFitAloneIsRefusedNamingRowTokensAndBound() throws Exception {
    Fixtures.Case c = Fixtures.cases().iterator().next();
    long bound = 4L << 20;
    // the first row with a sequence over the bound, as the default settings see the rows
    long expectedRow = -1;
    int expectedTokens = 0;
    try (UserModel user = UserModel.open(c.modelDir(), UserModel.Runner.LOGPROB, NONE)) {
      TokenBudget budget = user.budget();
      for (Example e : user.prepare(ExampleSet.load(c.dataset(), c.format())).examples()) {
        for (int length : CausalLmLogprobRunner.sequenceLengths(e, NONE)) {
          if (expectedRow < 0 && budget.aloneBytes(length) > bound) {
            expectedRow = e.index();
            expectedTokens = length;
          }
        }
      }
    }
    assertTrue(expectedRow >= 0, "the fixture has a row over 4 MiB alone");
    try (UserModel user =
        UserModel.open(
            c.modelDir(),
            UserModel.Runner.LOGPROB,
            NONE,
            DType.F32,
            new BudgetSettings(4096, bound))) {
      ExampleSet raw = ExampleSet.load(c.dataset(), c.format());
      var e = assertThrows(InvalidRowException.class, () -> user.prepare(raw));
      assertEquals(expectedRow, e.row(), e.getMessage());
      assertTrue(
          e.getMessage()
              .matches(
                  ".* row "
                      + expectedRow
                      + ": a sequence of "
                      + expectedTokens
                      + " tokens .* needs about [0-9,]+ MiB for its forward pass alone, more than"
                      + " the memory bound of 4 MiB: raise --memory-bound or cut rows with"
                      + " --max-length"),
          e.getMessage());
    }
  }
}
