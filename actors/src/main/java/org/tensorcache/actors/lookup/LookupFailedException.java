package org.tensorcache.actors.lookup;

/** A lookup that could not be served: a compute failure or the lookup timeout. */
public final class LookupFailedException extends RuntimeException {
  /** With the reason the cluster gave. */
  public LookupFailedException(String message, Throwable cause) {
    super(message, cause);
  }
}
