package org.tensorcache.model.batch;

import java.util.Locale;

/**
 * What a user sets of the {@link TokenBudget} ({@code --batch-tokens}, {@code --memory-bound}); the
 * memory model comes from the model directory.
 */
public record BudgetSettings(int batchTokens, long memoryBound) {
  /** The defaults. */
  public static final BudgetSettings DEFAULT =
      new BudgetSettings(TokenBudget.DEFAULT_BATCH_TOKENS, TokenBudget.DEFAULT_MEMORY_BOUND);

  /** The budget of these settings for a model of {@code memory}. */
  public TokenBudget budget(MemoryModel memory) {
    return new TokenBudget(batchTokens, memoryBound, memory);
  }

  /**
   * Parses a size such as {@code 2g}, {@code 512m}, {@code 1.5GiB} or a plain number of bytes,
   * naming the value and the expected form otherwise.
   */
  public static long parseBytes(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT).replaceAll("i?b$", "");
    long unit = 1;
    if (!t.isEmpty()) {
      switch (t.charAt(t.length() - 1)) {
        case 'k' -> unit = 1L << 10;
        case 'm' -> unit = 1L << 20;
        case 'g' -> unit = 1L << 30;
        case 't' -> unit = 1L << 40;
        default -> unit = 1;
      }
    }
    String number = unit == 1 ? t : t.substring(0, t.length() - 1);
    try {
      double value = Double.parseDouble(number);
      if (!(value > 0) || value * unit > Long.MAX_VALUE) {
        throw new NumberFormatException();
      }
      return (long) (value * unit);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "size '" + text + "' invalid, expected a positive number of bytes or e.g. 512m, 2g");
    }
  }
}
