package org.tensorcache.actors.lookup;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The frames of the lookup port on one side of one connection: an int32 little-endian length, then
 * that many bytes. One reusable buffer per connection, so that a warm connection allocates nothing
 * per request; a frame read stays valid until the next read or build.
 */
public final class LookupFrames {
  /** The largest frame either side reads or writes. */
  public static final int MAX_FRAME = 256 << 20;

  private byte[] bytes = new byte[8192];

  /** Reads one frame; the buffer holds its body (after the length) until the next call. */
  public ByteBuffer read(InputStream in) throws IOException {
    return read(in, MAX_FRAME);
  }

  /**
   * Reads one frame of at most {@code maxFrame} bytes, so a bad peer cannot make us allocate: the
   * buffer grows with the bytes that arrive, not with the length announced.
   */
  public ByteBuffer read(InputStream in, int maxFrame) throws IOException {
    readFully(in, bytes, 4);
    int length = ByteBuffer.wrap(bytes, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    if (length < 1 || length > maxFrame) {
      throw new ProtocolException("frame of " + length + " bytes, expected 1.." + maxFrame);
    }
    for (int at = 0; at < length; ) {
      if (at == bytes.length) {
        bytes = Arrays.copyOf(bytes, (int) Math.min(length, 2L * bytes.length));
      }
      int n = in.read(bytes, at, Math.min(length, bytes.length) - at);
      if (n < 0) {
        throw new EOFException("connection closed mid-frame");
      }
      at += n;
    }
    return ByteBuffer.wrap(bytes, 0, length).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A buffer for a frame body of {@code bodyLength} bytes, positioned after the length. */
  public ByteBuffer start(int bodyLength) {
    ensure(4 + bodyLength);
    ByteBuffer b = ByteBuffer.wrap(bytes, 0, 4 + bodyLength).order(ByteOrder.LITTLE_ENDIAN);
    return b.putInt(bodyLength);
  }

  /** Sends the frame built in {@code b} (its whole limit) and flushes. */
  public void send(ByteBuffer b, OutputStream out) throws IOException {
    out.write(bytes, 0, b.limit());
    out.flush();
  }

  private void ensure(int length) {
    if (bytes.length < length) {
      bytes = new byte[Math.max(length, bytes.length * 2)];
    }
  }

  private static void readFully(InputStream in, byte[] into, int length) throws IOException {
    for (int at = 0; at < length; ) {
      int n = in.read(into, at, length - at);
      if (n < 0) {
        throw new EOFException(at == 0 ? "connection closed" : "connection closed mid-frame");
      }
      at += n;
    }
  }
}
