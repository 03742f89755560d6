package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;

/**
 * Reads the header bytes at the start of a safetensors file: an 8-byte little-endian length, then
 * that many bytes. The length is checked against bounds and the file's size before anything is
 * allocated, so a corrupt prefix is a rejection, not a huge allocation.
 */
public final class SafetensorsReader {
  /** The largest header accepted, far above what any cache spec needs. */
  public static final long MAX_HEADER_BYTES = 16L << 20;

  private SafetensorsReader() {}

  /** Reads the header bytes after checking the length prefix against bounds and the file size. */
  public static byte[] read(Path file, FileChannel ch, long fileSize) throws IOException {
    if (fileSize < 8) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected at least 8", fileSize);
    }
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    readFully(ch, prefix, 0);
    int n = checkLength(file, prefix.flip().getLong(), fileSize);
    ByteBuffer header = ByteBuffer.allocate(n);
    readFully(ch, header, 8);
    return header.array();
  }

  /** Like {@link #read(Path, FileChannel, long)}, from the whole file already in {@code whole}. */
  public static byte[] read(Path file, ByteBuffer whole) {
    long fileSize = whole.remaining();
    if (fileSize < 8) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected at least 8", fileSize);
    }
    ByteBuffer le = whole.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int n = checkLength(file, le.getLong(), fileSize);
    byte[] header = new byte[n];
    le.get(header);
    return header;
  }

  /** The header length of a file's prefix, checked against the limits and the file's size. */
  private static int checkLength(Path file, long n, long fileSize) {
    if (n < 2 || n > MAX_HEADER_BYTES) {
      throw reject(
          file,
          Reason.BAD_HEADER,
          "header length %s, expected 2..%d",
          Long.toUnsignedString(n),
          MAX_HEADER_BYTES);
    }
    if (n % 8 != 0) {
      throw reject(file, Reason.BAD_HEADER, "header length %d, expected a multiple of 8", n);
    }
    if (fileSize < 8 + n) {
      throw reject(file, Reason.TRUNCATED, "%d bytes, expected 8 + header %d", fileSize, n);
    }
    return (int) n;
  }

  private static void readFully(FileChannel ch, ByteBuffer dst, long position) throws IOException {
    while (dst.hasRemaining()) {
      int n = ch.read(dst, position);
      if (n < 0) {
        throw new EOFException("file ended at byte " + position);
      }
      position += n;
    }
  }
}
