package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A fixed-size byte array behind the positional {@link FileChannel} calls the segment code uses
 * ({@code read/write(buffer, position)} and {@code size()}), so that its encoder and strict decoder
 * run unchanged without a file, a system call or an fsync.
 */
final class MemoryChannel extends FileChannel {
  private final byte[] bytes;
  private long end; // one past the last byte written

  /** A channel over {@code bytes}: reads see them, writes change them. */
  MemoryChannel(byte[] bytes) {
    this.bytes = bytes;
  }

  /** The backing array. */
  byte[] bytes() {
    return bytes;
  }

  /** One past the last byte written. */
  long end() {
    return end;
  }

  @Override
  public int read(ByteBuffer dst, long position) {
    if (position >= bytes.length) {
      return -1;
    }
    int n = (int) Math.min(dst.remaining(), bytes.length - position);
    dst.put(bytes, (int) position, n);
    return n;
  }

  @Override
  public int write(ByteBuffer src, long position) throws IOException {
    int n = src.remaining();
    if (position + n > bytes.length) {
      throw new IOException(
          "write of " + n + " bytes at " + position + " past the end " + bytes.length);
    }
    src.get(bytes, (int) position, n);
    end = Math.max(end, position + n);
    return n;
  }

  @Override
  public long size() {
    return bytes.length;
  }

  @Override
  public void force(boolean metaData) {
    // nothing to make durable
  }

  // The stream-style and mapping calls are never used by the segment code.

  @Override
  public int read(ByteBuffer dst) {
    throw unsupported();
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) {
    throw unsupported();
  }

  @Override
  public int write(ByteBuffer src) {
    throw unsupported();
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) {
    throw unsupported();
  }

  @Override
  public long position() {
    throw unsupported();
  }

  @Override
  public FileChannel position(long newPosition) {
    throw unsupported();
  }

  @Override
  public FileChannel truncate(long size) {
    throw unsupported();
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) {
    throw unsupported();
  }

  @Override
  public long transferFrom(ReadableByteChannel src, long position, long count) {
    throw unsupported();
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) {
    throw unsupported();
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) {
    throw unsupported();
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) {
    throw unsupported();
  }

  @Override
  protected void implCloseChannel() {}

  private static UnsupportedOperationException unsupported() {
    return new UnsupportedOperationException("a memory channel only reads and writes by position");
  }
}
