package org.tensorcache.store.objects;

/**
 * Object storage kept failing with transient errors (connection refused, timeouts, 5xx replies) for
 * the whole retry window; the last error is the cause.
 */
public final class ObjectStorageUnavailableException extends ObjectStorageException {
  private static final long serialVersionUID = 1L;

  private final int attempts;

  /** A request tried {@code attempts} times, the last time failing with {@code last}. */
  public ObjectStorageUnavailableException(String message, int attempts, Throwable last) {
    super(message, last);
    this.attempts = attempts;
  }

  /** How many times the request was tried. */
  public int attempts() {
    return attempts;
  }
}
