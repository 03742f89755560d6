package org.tensorcache.launch;

/**
 * Checks of numeric command-line options, with one message form that names the option, the value
 * and what was expected: {@code --batch-tokens 0: expected >= 8}.
 */
public final class OptionRanges {
  private OptionRanges() {}

  /** {@code value} of {@code option} when it is at least {@code min}, else an error naming it. */
  public static int atLeast(String option, int value, int min) {
    if (value < min) {
      throw invalid(option, value, ">= " + min);
    }
    return value;
  }

  /** {@code value} of {@code option} when it is in {@code [min, max]}, else an error naming it. */
  public static int between(String option, long value, int min, int max) {
    if (value < min || value > max) {
      throw invalid(option, value, min + ".." + max);
    }
    return (int) value;
  }

  /** A network port: 1..65535, or 0 for any free port when {@code anyFree}. */
  public static int port(String option, int value, boolean anyFree) {
    if (value == 0 && anyFree) {
      return value;
    }
    if (value < 1 || value > 65_535) {
      throw invalid(option, value, anyFree ? "1..65535 or 0 (any free port)" : "1..65535");
    }
    return value;
  }

  /** The error for {@code value} of {@code option}, which was expected to be {@code expected}. */
  public static IllegalArgumentException invalid(String option, Object value, String expected) {
    return new IllegalArgumentException(option + " " + value + ": expected " + expected);
  }

  /** A timeout of {@code seconds} (at least 1) given to {@code option}. */
  public static java.time.Duration seconds(String option, int seconds) {
    return java.time.Duration.ofSeconds(atLeast(option, seconds, 1));
  }
}
