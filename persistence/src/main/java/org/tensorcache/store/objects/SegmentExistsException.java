package org.tensorcache.store.objects;

import java.io.IOException;
import java.util.Optional;
import org.tensorcache.store.segment.SegmentRejectedException;

/**
 * Creating a segment object met an object already under its key that is not the segment being
 * written: one that fails a check (truncated, corrupt, of another cache or range), or a valid
 * segment of the range holding other values. The existing object is left as it is.
 */
public final class SegmentExistsException extends IOException {
  private static final long serialVersionUID = 1L;

  private final String uri;
  private final transient SegmentRejectedException rejection;
  private final transient Object existing;

  private SegmentExistsException(
      String uri, String message, SegmentRejectedException rejection, Object existing) {
    super(message, rejection);
    this.uri = uri;
    this.rejection = rejection;
    this.existing = existing;
  }

  /** The object at {@code uri} failed the checks of a segment of the range written. */
  static SegmentExistsException damaged(String uri, SegmentRejectedException rejection) {
    return new SegmentExistsException(
        uri,
        uri
            + " already exists and is not a valid segment of this range ("
            + rejection.getMessage()
            + "); it was left as it is, expected the segment being written or none",
        rejection,
        null);
  }

  /** The object at {@code uri} is a valid segment of the range whose bytes differ from ours. */
  static SegmentExistsException different(
      String uri,
      int range,
      Object existing,
      int existingPresent,
      int writtenPresent,
      long firstDifference) {
    return new SegmentExistsException(
        uri,
        String.format(
            "%s already exists as a valid segment of range %d with other values (%d examples"
                + " present, %d in the values written; first difference at byte %d); it was left"
                + " as it is, expected the same bytes",
            uri, range, existingPresent, writtenPresent, firstDifference),
        null,
        existing);
  }

  /** The object's URI. */
  public String uri() {
    return uri;
  }

  /** The check the existing object failed, when it is not a valid segment of the range. */
  public Optional<SegmentRejectedException> rejection() {
    return Optional.ofNullable(rejection);
  }

  /**
   * The values the existing object holds (a block or rows, as the store's codec reads them), when
   * it is a valid segment with other values.
   */
  public Optional<Object> existing() {
    return Optional.ofNullable(existing);
  }
}
