package org.tensorcache.model.data;

import java.nio.file.Path;

/** A data set file that holds no rows (nothing, or only a header). */
public final class EmptyDataSetException extends IllegalArgumentException {
  /** The file {@code file}, which had a header line when {@code hadHeader}. */
  public EmptyDataSetException(Path file, boolean hadHeader) {
    super(
        "data set "
            + file
            + (hadHeader ? " has a header and no rows" : " is empty")
            + ": expected one JSON object per line");
  }
}
