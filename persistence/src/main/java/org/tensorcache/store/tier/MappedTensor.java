package org.tensorcache.store.tier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.zip.CRC32C;
import org.tensorcache.fields.DType;

/**
 * One field's tensor of a mapped segment: {@code rows} rows of {@code width} elements of one dtype,
 * little-endian, read through typed views with absolute gets, which change no position and so serve
 * any number of threads.
 *
 * <p>A Java 17 mapping holds at most 2 GiB, and a field may hold more (2^31 elements of 8 bytes),
 * so a large tensor is mapped in chunks of whole rows, a power of two of them each, so that a row
 * is never split and finding its chunk is a shift.
 */
final class MappedTensor {
  /** Maps {@code length} bytes of the file from {@code offset}. */
  @FunctionalInterface
  interface Mapper {
    ByteBuffer map(long offset, long length) throws IOException;
  }

  private final DType dtype;
  private final int width;
  private final int shift;
  private final int mask;
  private final ByteBuffer[] chunks;
  private final Object[] views;

  private MappedTensor(DType dtype, int width, int shift, ByteBuffer[] chunks) {
    this.dtype = dtype;
    this.width = width;
    this.shift = shift;
    this.mask = (1 << shift) - 1;
    this.chunks = chunks;
    this.views = new Object[chunks.length];
    for (int c = 0; c < chunks.length; c++) {
      ByteBuffer b = chunks[c].order(ByteOrder.LITTLE_ENDIAN);
      views[c] =
          switch (dtype) {
            case F32 -> b.asFloatBuffer();
            case F16, BF16 -> b.asShortBuffer();
            case I32 -> b.asIntBuffer();
            case I64 -> b.asLongBuffer();
          };
    }
  }

  /**
   * Maps the tensor that starts at file offset {@code offset}, in chunks of at most {@code
   * maxChunkBytes} (at least one row each).
   */
  static MappedTensor map(
      Mapper mapper, long offset, String name, DType dtype, int width, int rows, long maxChunkBytes)
      throws IOException {
    long rowBytes = (long) width * dtype.bytes();
    if (rowBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          String.format(
              "field '%s' has %d bytes per example, expected at most 2^31-1 to map it",
              name, rowBytes));
    }
    long fit = Math.max(1, Math.min(maxChunkBytes, Integer.MAX_VALUE) / rowBytes);
    int perChunk = Integer.highestOneBit((int) Math.min(fit, 1 << 30));
    int shift = Integer.numberOfTrailingZeros(perChunk);
    ByteBuffer[] chunks = new ByteBuffer[(int) (((long) rows + perChunk - 1) >>> shift)];
    for (int c = 0; c < chunks.length; c++) {
      long first = (long) c << shift;
      long n = Math.min(perChunk, rows - first);
      chunks[c] = mapper.map(offset + first * rowBytes, n * rowBytes);
    }
    return new MappedTensor(dtype, width, shift, chunks);
  }

  /** Adds the tensor's bytes, in file order, to {@code crc}. */
  void updateCrc(CRC32C crc) {
    for (ByteBuffer chunk : chunks) {
      crc.update(chunk.duplicate());
    }
  }

  /** Copies rows {@code [row, row + count)} into {@code dst} (of the dtype) from {@code off}. */
  void copyRows(int row, int count, Object dst, int off) {
    while (count > 0) {
      int chunk = row >>> shift;
      int at = row & mask;
      int n = Math.min(count, mask + 1 - at);
      copy(views[chunk], at * width, dst, off, n * width);
      row += n;
      count -= n;
      off += n * width;
    }
  }

  /** One element is a plain get: a bulk get's set-up costs more than the element. */
  private void copy(Object view, int from, Object dst, int off, int n) {
    switch (dtype) {
      case F32 -> {
        if (n == 1) {
          ((float[]) dst)[off] = ((FloatBuffer) view).get(from);
        } else {
          ((FloatBuffer) view).get(from, (float[]) dst, off, n);
        }
      }
      case F16, BF16 -> {
        if (n == 1) {
          ((short[]) dst)[off] = ((ShortBuffer) view).get(from);
        } else {
          ((ShortBuffer) view).get(from, (short[]) dst, off, n);
        }
      }
      case I32 -> {
        if (n == 1) {
          ((int[]) dst)[off] = ((IntBuffer) view).get(from);
        } else {
          ((IntBuffer) view).get(from, (int[]) dst, off, n);
        }
      }
      case I64 -> {
        if (n == 1) {
          ((long[]) dst)[off] = ((LongBuffer) view).get(from);
        } else {
          ((LongBuffer) view).get(from, (long[]) dst, off, n);
        }
      }
    }
  }
}
