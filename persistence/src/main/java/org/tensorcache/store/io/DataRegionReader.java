package org.tensorcache.store.io;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;

/**
 * Streams little-endian data of a known length from a channel through a fixed buffer, keeping the
 * CRC32C of everything read.
 */
public final class DataRegionReader {
  private static final int BUFFER_BYTES = 1 << 20;

  private final FileChannel channel;
  private final ByteBuffer buffer;
  private final CRC32C crc = new CRC32C();
  private long position;
  private long unread;

  /** Reads the {@code length} bytes of {@code channel} that start at {@code position}. */
  public DataRegionReader(FileChannel channel, long position, long length) {
    this.channel = channel;
    this.position = position;
    this.unread = length;
    // no larger than the data: small segments should not pay for a large allocation
    int capacity = (int) Math.max(Float.BYTES, Math.min(BUFFER_BYTES, length));
    this.buffer = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    buffer.limit(0);
  }

  /**
   * Reads the {@code length} bytes of {@code whole} (a file already in memory) that start at {@code
   * position}: no further reads, and the checksum in one pass.
   */
  public DataRegionReader(ByteBuffer whole, long position, long length) {
    this.channel = null;
    this.position = position + length;
    this.unread = 0;
    this.buffer =
        whole
            .duplicate()
            .position((int) position)
            .limit((int) (position + length))
            .slice()
            .order(ByteOrder.LITTLE_ENDIAN);
    crc.update(buffer.duplicate());
  }

  /** Reads {@code count} floats into {@code dst} from {@code off}. */
  public void getFloats(float[] dst, int off, int count) throws IOException {
    while (count > 0) {
      if (buffer.remaining() < Float.BYTES) {
        refill();
      }
      int n = Math.min(count, buffer.remaining() / Float.BYTES);
      buffer.asFloatBuffer().get(dst, off, n);
      buffer.position(buffer.position() + n * Float.BYTES);
      off += n;
      count -= n;
    }
  }

  /**
   * Reads {@code count} elements of {@code t} into {@code dst} (an array of its Java type) from
   * {@code off}.
   */
  public void getElements(DType t, Object dst, int off, int count) throws IOException {
    if (dst instanceof float[] f) {
      getFloats(f, off, count);
      return;
    }
    int size = t.bytes();
    while (count > 0) {
      if (buffer.remaining() < size) {
        refill();
      }
      int n = Math.min(count, buffer.remaining() / size);
      FieldArrays.read(t, buffer, dst, off, n);
      off += n;
      count -= n;
    }
  }

  /** Reads {@code count} bytes into {@code dst} from {@code off}. */
  public void getBytes(byte[] dst, int off, int count) throws IOException {
    while (count > 0) {
      if (!buffer.hasRemaining()) {
        refill();
      }
      int n = Math.min(count, buffer.remaining());
      buffer.get(dst, off, n);
      off += n;
      count -= n;
    }
  }

  /** CRC32C of the bytes read from the channel so far. */
  public int crc32c() {
    return (int) crc.getValue();
  }

  private void refill() throws IOException {
    if (unread == 0) {
      throw new EOFException("read past the end of the data region");
    }
    buffer.compact();
    int start = buffer.position();
    int want = (int) Math.min(buffer.remaining(), unread);
    buffer.limit(start + want);
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, position);
      if (n < 0) {
        throw new EOFException("file ended " + unread + " bytes before the end of its data region");
      }
      position += n;
      unread -= n;
    }
    ByteBuffer fresh = buffer.duplicate();
    fresh.flip().position(start);
    crc.update(fresh);
    buffer.flip();
  }
}
