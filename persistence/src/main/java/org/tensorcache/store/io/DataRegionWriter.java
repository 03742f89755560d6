package org.tensorcache.store.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;

/**
 * Streams little-endian data to a channel from a given position through a fixed buffer, keeping the
 * CRC32C of everything written; nothing is built in memory beyond the buffer.
 */
public final class DataRegionWriter {
  private static final int BUFFER_BYTES = 1 << 20;

  /** Where the bytes go: a positional write, as {@link FileChannel#write(ByteBuffer, long)}. */
  @FunctionalInterface
  public interface Target {
    /** Writes some of {@code src} at byte {@code position}; the count written. */
    int write(ByteBuffer src, long position) throws IOException;
  }

  private final Target target;
  private final ByteBuffer buffer;
  private final CRC32C crc = new CRC32C();
  private long position;

  /**
   * Writes about {@code length} bytes to {@code channel} starting at byte {@code position}; the
   * buffer is no larger than the data, so small segments do not pay for a large allocation.
   */
  public DataRegionWriter(FileChannel channel, long position, long length) {
    this(channel::write, position, length);
  }

  /** Like {@link #DataRegionWriter(FileChannel, long, long)}, to {@code target}. */
  public DataRegionWriter(Target target, long position, long length) {
    this.target = target;
    this.position = position;
    int capacity = (int) Math.max(Float.BYTES, Math.min(BUFFER_BYTES, length));
    this.buffer = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Appends {@code count} floats of {@code src} from {@code off}. */
  public void putFloats(float[] src, int off, int count) throws IOException {
    while (count > 0) {
      if (buffer.remaining() < Float.BYTES) {
        flush();
      }
      int n = Math.min(count, buffer.remaining() / Float.BYTES);
      buffer.asFloatBuffer().put(src, off, n);
      buffer.position(buffer.position() + n * Float.BYTES);
      off += n;
      count -= n;
    }
  }

  /**
   * Appends {@code count} elements of {@code t} of {@code src} (its Java type) from {@code off}.
   */
  public void putElements(DType t, Object src, int off, int count) throws IOException {
    if (src instanceof float[] f) {
      putFloats(f, off, count);
      return;
    }
    int size = t.bytes();
    while (count > 0) {
      if (buffer.remaining() < size) {
        flush();
      }
      int n = Math.min(count, buffer.remaining() / size);
      FieldArrays.write(t, src, off, n, buffer);
      off += n;
      count -= n;
    }
  }

  /** Appends {@code count} sentinels of {@code t}, the elements of a missing example. */
  public void putSentinels(DType t, long count) throws IOException {
    Object chunk = FieldArrays.sentinels(t, (int) Math.min(count, 1 << 14));
    for (long done = 0; done < count; ) {
      int n = (int) Math.min(count - done, FieldArrays.length(chunk));
      putElements(t, chunk, 0, n);
      done += n;
    }
  }

  /** Appends {@code value} {@code count} times. */
  public void putRepeated(float value, long count) throws IOException {
    for (long i = 0; i < count; i++) {
      if (buffer.remaining() < Float.BYTES) {
        flush();
      }
      buffer.putFloat(value);
    }
  }

  /** Appends {@code count} bytes of {@code src} from {@code off}. */
  public void putBytes(byte[] src, int off, int count) throws IOException {
    while (count > 0) {
      if (!buffer.hasRemaining()) {
        flush();
      }
      int n = Math.min(count, buffer.remaining());
      buffer.put(src, off, n);
      off += n;
      count -= n;
    }
  }

  /** Writes out what is buffered. */
  public void flush() throws IOException {
    buffer.flip();
    crc.update(buffer.duplicate());
    while (buffer.hasRemaining()) {
      int n = target.write(buffer, position);
      position += n;
    }
    buffer.clear();
  }

  /** CRC32C of the bytes written so far, after {@link #flush()}. */
  public int crc32c() {
    return (int) crc.getValue();
  }
}
