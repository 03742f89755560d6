package org.tensorcache.model.runner;

/** Runner output that must not be stored: NaN, or not of the field's shape. */
public final class InvalidRunnerOutputException extends RuntimeException {
  private final long exampleIndex;

  /** A problem with the value of example {@code exampleIndex}. */
  public InvalidRunnerOutputException(long exampleIndex, String message) {
    super(message);
    this.exampleIndex = exampleIndex;
  }

  /** The index of the example whose output is invalid (-1 when it is the whole batch). */
  public long exampleIndex() {
    return exampleIndex;
  }
}
