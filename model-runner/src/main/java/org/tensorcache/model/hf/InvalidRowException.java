package org.tensorcache.model.hf;

/** A data set row the model cannot take; the message names the data set, the row and the field. */
public final class InvalidRowException extends IllegalArgumentException {
  private final long row;

  /** A problem with 0-based row {@code row} of {@code source}. */
  public InvalidRowException(String source, long row, String problem) {
    super(source + " row " + row + ": " + problem);
    this.row = row;
  }

  /** The 0-based row (the example index). */
  public long row() {
    return row;
  }
}
