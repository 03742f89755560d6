package org.tensorcache.store.segment;

import java.nio.file.Path;

/**
 * A stored safetensors file or object (a segment or an export) failed a check; it is never turned
 * into a block. The message names the file or object and what was expected versus found.
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
  private final String source;
  private final Reason reason;
  private final String detail;

  /** Rejects {@code file} for {@code reason}; the message says what was expected and found. */
  public SegmentRejectedException(Path file, Reason reason, String message) {
    this(file, file.toString(), reason, message);
  }

  private SegmentRejectedException(Path file, String source, Reason reason, String detail) {
    super(reason + ": " + source + ": " + detail);
    this.file = file;
    this.source = source;
    this.reason = reason;
    this.detail = detail;
  }

  /**
   * The same rejection naming {@code source} (an object's URI) instead of the local file it was
   * checked in, which is often a temporary download; this exception is its cause.
   */
  public SegmentRejectedException namedAs(String source) {
    SegmentRejectedException named = new SegmentRejectedException(null, source, reason, detail);
    named.initCause(this);
    return named;
  }

  /** The rejected file; null when the rejection names an object ({@link #namedAs}). */
  public Path file() {
    return file;
  }

  /** What was rejected: the file's path, or the object's URI. */
  public String source() {
    return source;
  }

  /** Which check failed. */
  public Reason reason() {
    return reason;
  }
}
