package org.tensorcache.launch.tls;

/**
 * A node's transport security is not as configured or required: a key or certificate file that is
 * missing, unreadable, malformed, expired or not issued by the CA, or an unencrypted transport
 * where encryption is required. The message names the file or setting and what is wrong.
 */
public final class TransportSecurityException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** An error whose message names the file or setting and what is wrong with it. */
  public TransportSecurityException(String message) {
    super(message);
  }

  /** An error whose message names the file or setting, caused by {@code cause}. */
  public TransportSecurityException(String message, Throwable cause) {
    super(message, cause);
  }
}
