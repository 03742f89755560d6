package org.tensorcache.model.data;

/**
 * One row of a data set; {@code index} is its 0-based row number, the key it is cached under. The
 * kinds are the data set formats a runner can take, before and after tokenization.
 */
public sealed interface Example
    permits PreferenceExample,
        TokenizedPreference,
        DocumentExample,
        TokenizedDocument,
        CompletionExample,
        TokenizedCompletion {
  /** The 0-based row number in the data set. */
  long index();

  /** Short name of the kind, for errors that say what was expected. */
  default String kind() {
    return getClass().getSimpleName();
  }

  /**
   * {@code example} as {@code type}, or an error naming the row, what it is and what {@code runner}
   * needs.
   */
  static <T extends Example> T as(Class<T> type, Example example, String runner) {
    if (!type.isInstance(example)) {
      throw new IllegalArgumentException(
          String.format(
              "example %d is a %s, runner '%s' takes %s rows",
              example.index(), example.kind(), runner, type.getSimpleName()));
    }
    return type.cast(example);
  }
}
