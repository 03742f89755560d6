package org.tensorcache.model.usermodel;

import java.util.ArrayList;
import java.util.List;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.DocumentExample;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.HfTokenizer;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.RowChecks;
import org.tensorcache.model.hf.TrlTokenization;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;

/** Turns a data set into the rows a user's model takes, checking every row before any compute. */
final class RowPreparation {
  private final ModelDirectory dir;
  private final HfTokenizer tokenizer;
  private final UserModel.Runner runner;
  private final Truncation truncation;
  private final TokenBudget budget;

  RowPreparation(
      ModelDirectory dir,
      HfTokenizer tokenizer,
      UserModel.Runner runner,
      Truncation truncation,
      TokenBudget budget) {
    this.dir = dir;
    this.tokenizer = tokenizer;
    this.runner = runner;
    this.truncation = truncation;
    this.budget = budget;
  }

  /**
   * The rows the runner takes, tokenized and checked: text rows tokenized as TRL does, token rows
   * as they are. Any row the model cannot take stops it here, before anything is computed.
   */
  ExampleSet prepare(ExampleSet raw) {
    String source = raw.source().toString();
    RowChecks checks = new RowChecks(source, tokenizer.vocabSize(), dir.maxPositions());
    List<Example> rows = new ArrayList<>(raw.size());
    if (runner == UserModel.Runner.LOGPROB) {
      TrlTokenization trl =
          raw.format() == DataFormat.TEXT ? new TrlTokenization(tokenizer, dir.eosToken()) : null;
      for (Example e : raw.examples()) {
        TokenizedPreference row;
        if (e instanceof PreferenceExample p && trl != null) {
          row = trl.tokenize(p);
        } else if (e instanceof TokenizedPreference t) {
          row = t;
        } else {
          throw wrongRows(raw, e);
        }
        checks.check(row, truncation);
        fits(source, row.index(), CausalLmLogprobRunner.sequenceLengths(row, truncation));
        rows.add(row);
      }
    } else {
      for (Example e : raw.examples()) {
        if (!(e instanceof DocumentExample d)) {
          throw wrongRows(raw, e);
        }
        TokenizedDocument row = TrlTokenization.tokenize(d, tokenizer);
        checks.check(row);
        fits(source, row.index(), new int[] {row.ids().length});
        rows.add(row);
      }
    }
    return raw.withExamples(rows, raw.format());
  }

  /** Refuses a row with a sequence whose forward pass alone would pass the memory bound. */
  private void fits(String source, long row, int[] lengths) {
    for (int length : lengths) {
      long bytes = budget.aloneBytes(length);
      if (bytes > budget.memoryBound()) {
        throw new InvalidRowException(
            source,
            row,
            String.format(
                "a sequence of %d tokens (prompt + completion, after truncation) needs about %s"
                    + " for its forward pass alone, more than the memory bound of %s: raise"
                    + " --memory-bound or cut rows with --max-length",
                length, TokenBudget.mib(bytes), TokenBudget.mib(budget.memoryBound())));
      }
    }
  }

  private IllegalArgumentException wrongRows(ExampleSet raw, Example e) {
    String expected =
        runner == UserModel.Runner.LOGPROB
            ? "text {\"prompt\", \"chosen\", \"rejected\"} or tokens {\"prompt_ids\", \"chosen_ids\","
                + " \"rejected_ids\"} rows"
            : "{\"text\"} rows";
    return new IllegalArgumentException(
        String.format(
            "%s has %s rows (row %d), runner '%s' takes %s",
            raw.source(), raw.format().cliName(), e.index(), runner.cliName(), expected));
  }
}
