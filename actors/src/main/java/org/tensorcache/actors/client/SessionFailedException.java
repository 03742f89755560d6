package org.tensorcache.actors.client;

/**
 * Tells a trainer that a request to its session got no answer: it timed out (the session's shard
 * moving after a node died, a busy cluster) or failed on the way. A session that answers with a
 * refusal (a step it cannot resume from, another run's configuration) is an {@link
 * IllegalArgumentException} instead, and a lookup of the step's values that fails is a {@link
 * LookupFailedException}.
 */
public final class SessionFailedException extends RuntimeException {
  private final String sessionId;

  /**
   * Creates the failure of a request to the session with entity id {@code sessionId}; the message
   * names the session, then {@code reason}.
   */
  public SessionFailedException(String sessionId, String reason, Throwable cause) {
    super("trainer session " + sessionId + ": " + reason, cause);
    this.sessionId = sessionId;
  }

  /** Returns the entity id of the session, {@code <run id>/<rank>}. */
  public String sessionId() {
    return sessionId;
  }
}
