package org.tensorcache.store.segment;

import java.nio.file.Path;

/**
 * A stored safetensors file (a segment or an export) failed a check; it is never turned into a
 * block. The message names the file and what was expected versus found.
 */
public final class SegmentRejectedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Which check failed. */
  public enum Reason {
    /** The file is shorter than its header says. */
    TRUNCATED,
    /** The file is longer than its header says. */
    OVERSIZED,
    /** The header is not the strict, canonical JSON this format writes. */
    BAD_HEADER,
    /** A tensor's dtype, shape or offsets, or the cache's n, range size or fields differ. */
    SHAPE_MISMATCH,
    /** The data region's CRC32C differs from the header's. */
    BAD_CHECKSUM,
    /** The file belongs to another cache (fingerprint or cache id). */
    FOREIGN_FINGERPRINT,
    /** The file holds another range than the one asked for. */
    WRONG_RANGE,
    /** The data holds a value that cannot have been written (NaN, stray bits, a bad presence). */
    BAD_VALUE
  }

  private final transient Path file;
  private final Reason reason;

  /** Rejects {@code file} for {@code reason}; the message says what was expected and found. */
  public SegmentRejectedException(Path file, Reason reason, String message) {
    super(reason + ": " + file + ": " + message);
    this.file = file;
    this.reason = reason;
  }

  /** The rejected file. */
  public Path file() {
    return file;
  }

  /** Which check failed. */
  public Reason reason() {
    return reason;
  }
}
