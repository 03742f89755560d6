package org.tensorcache.model.data;

/** A data set line that is not a valid preference example; the message names line and field. */
public final class MalformedDataException extends RuntimeException {
  private final long line;

  /** A problem on 1-based line {@code line}. */
  public MalformedDataException(String source, long line, String problem, Throwable cause) {
    super(source + " line " + line + ": " + problem, cause);
    this.line = line;
  }

  /** The 1-based line number of the bad line. */
  public long line() {
    return line;
  }
}
