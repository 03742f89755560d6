package org.tensorcache.model.hf;

import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.data.TokenizedPreference;

/**
 * Checks, before anything is computed, that a tokenized row fits the model: every id inside the
 * vocabulary, no empty completion, and no sequence (after truncation) longer than the model's
 * positions. Errors name the data set, the row and the field.
 */
public final class RowChecks {
  private final String source;
  private final int vocabSize;
  private final int maxPositions;

  /** Checks against {@code vocabSize} ids and {@code maxPositions} (-1: not known, not checked). */
  public RowChecks(String source, int vocabSize, int maxPositions) {
    this.source = source;
    this.vocabSize = vocabSize;
    this.maxPositions = maxPositions;
  }

  /** Checks a preference row under {@code truncation}. */
  public void check(TokenizedPreference row, Truncation truncation) {
    ids(row.index(), "prompt_ids", row.promptIds());
    ids(row.index(), "chosen_ids", row.chosenIds());
    ids(row.index(), "rejected_ids", row.rejectedIds());
    nonEmpty(row.index(), "chosen_ids", row.chosenIds());
    nonEmpty(row.index(), "rejected_ids", row.rejectedIds());
    length(
        row.index(), "chosen_ids", truncation.cut(row.promptIds(), row.chosenIds()).ids().length);
    length(
        row.index(),
        "rejected_ids",
        truncation.cut(row.promptIds(), row.rejectedIds()).ids().length);
  }

  /** Checks a language-modeling row's ids, and its length under {@code truncation}. */
  public void check(TokenizedCompletion row, Truncation truncation) {
    ids(row.index(), "input_ids", row.ids());
    int max = truncation.maxLength();
    length(row.index(), "input_ids", max > 0 ? Math.min(max, row.ids().length) : row.ids().length);
  }

  /** Checks a text row's ids. */
  public void check(TokenizedDocument row) {
    ids(row.index(), "text", row.ids());
    nonEmpty(row.index(), "text", row.ids());
    length(row.index(), "text", row.ids().length);
  }

  private void ids(long row, String field, int[] ids) {
    for (int i = 0; i < ids.length; i++) {
      if (ids[i] < 0 || ids[i] >= vocabSize) {
        throw new InvalidRowException(
            source,
            row,
            String.format(
                "field '%s' token %d is id %d, outside the model's vocabulary [0, %d)",
                field, i, ids[i], vocabSize));
      }
    }
  }

  private void nonEmpty(long row, String field, int[] ids) {
    if (ids.length == 0) {
      throw new InvalidRowException(
          source, row, "field '" + field + "' has no tokens, expected at least one");
    }
  }

  private void length(long row, String field, int length) {
    if (maxPositions > 0 && length > maxPositions) {
      throw new InvalidRowException(
          source,
          row,
          String.format(
              "prompt + '%s' is %d tokens, more than the model's %d positions"
                  + " (cut it with --max-length %d)",
              field.replace("_ids", ""), length, maxPositions, maxPositions));
    }
  }
}
