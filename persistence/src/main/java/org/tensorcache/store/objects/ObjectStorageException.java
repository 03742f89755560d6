package org.tensorcache.store.objects;

import java.io.IOException;

/**
 * A request to object storage failed for good: refused (no such bucket, access denied) or, as
 * {@link ObjectStorageUnavailableException}, failing past the retry window. The message names the
 * operation, the object and the reply.
 */
public class ObjectStorageException extends IOException {
  private static final long serialVersionUID = 1L;

  /** A failure of {@code operation} whose reason is {@code cause}. */
  public ObjectStorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
