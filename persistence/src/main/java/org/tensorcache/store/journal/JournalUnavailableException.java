package org.tensorcache.store.journal;

/** Thrown when the journal database cannot be reached or its tables cannot be created. */
public final class JournalUnavailableException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message that names the JDBC url and what went wrong. */
  public JournalUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
