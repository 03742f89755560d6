package org.tensorcache.actors.lookup;

import java.net.ProtocolException;

/**
 * A PROTOCOL reply of a lookup port: the node refused a request and closed the connection. The wire
 * has no code for why; a node of every version words its refusals so that their start says it, and
 * {@link #of} reads that once, so that callers match on {@link #kind()}.
 */
public final class LookupRefusedException extends ProtocolException {
  private static final long serialVersionUID = 1L;

  /** How a refusal for want of credentials starts. */
  static final String UNAUTHORIZED = "unauthorized: ";

  /** How a refusal of a protocol version the node does not speak starts. */
  static final String VERSION = "protocol version ";

  /** Why a node refused a request. */
  public enum Kind {
    /** No AUTH where the port needs one, or a wrong token. */
    UNAUTHORIZED,
    /** A protocol version the node does not speak: an older node. */
    UNSUPPORTED_VERSION,
    /** Any other break of the protocol. */
    PROTOCOL
  }

  private final Kind kind;

  private LookupRefusedException(String message, Kind kind) {
    super(message);
    this.kind = kind;
  }

  /** The refusal {@code message} of {@code peer}, of the kind its start says. */
  static LookupRefusedException of(Object peer, String message) {
    Kind kind =
        message.startsWith(UNAUTHORIZED)
            ? Kind.UNAUTHORIZED
            : message.startsWith(VERSION) ? Kind.UNSUPPORTED_VERSION : Kind.PROTOCOL;
    return new LookupRefusedException(peer + " rejected a request: " + message, kind);
  }

  /** Why the node refused the request. */
  public Kind kind() {
    return kind;
  }
}
