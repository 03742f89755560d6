package org.tensorcache.actors.lookup;

import java.util.concurrent.TimeoutException;

/**
 * The lookup actor's answer to a lookup whose missing values were not computed within the lookup
 * timeout: a {@link TimeoutException}, so that it is counted as one wherever it arrives. It crosses
 * nodes inside a {@code StatusReply} by its class name and message, which is why it has the
 * one-argument constructor.
 */
public final class LookupTimeoutException extends TimeoutException {
  private static final long serialVersionUID = 1L;

  /** With the reason the lookup actor gives, which names the request and the timeout. */
  public LookupTimeoutException(String message) {
    super(message);
  }
}
