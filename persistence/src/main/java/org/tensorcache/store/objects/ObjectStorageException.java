package org.tensorcache.store.objects;

import java.io.IOException;

/**
 * A request to object storage failed for good: refused (no such bucket, access denied) or, as
 * {@link ObjectStorageUnavailableException}, failing past the retry window. The message names the
 * operation, the object and the reply.
 */
public class ObjectStorageException extends IOException {
  private static final long serialVersionUID = 1L;

  /** {@code message} names the request and its object; {@code cause} is what failed. */
  public ObjectStorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
