package org.tensorcache.store.topk;

import java.util.Arrays;

/** Bits appended most significant first, through a 64-bit window, into a growing byte array. */
final class BitWriter {
  private byte[] bytes = new byte[256];
  private int size; // whole bytes written
  private long window; // pending bits, most significant first
  private int held; // how many bits of the window are pending

  /** Appends the low {@code count} bits of {@code value}, {@code count} in [0, 56]. */
  void write(long value, int count) {
    if (count == 0) {
      return;
    }
    window |= (value & ((1L << count) - 1)) << (64 - held - count);
    held += count;
    while (held >= 8) {
      if (size == bytes.length) {
        bytes = Arrays.copyOf(bytes, bytes.length * 2);
      }
      bytes[size++] = (byte) (window >>> 56);
      window <<= 8;
      held -= 8;
    }
  }

  /** Appends {@code zeros} zero bits and a one: the unary part of the codes below. */
  void unary(int zeros) {
    for (int z = zeros; z > 0; z -= Math.min(z, 56)) {
      write(0, Math.min(z, 56));
    }
    write(1, 1);
  }

  /** Appends {@code value >= 0} in the Rice code of parameter {@code r}. */
  void rice(int value, int r) {
    unary(value >>> r);
    write(value, r);
  }

  /** Appends {@code value >= 0} in the exponential Golomb code of order {@code k}. */
  void expGolomb(int value, int k) {
    long w = (long) value + (1L << k);
    int width = 64 - Long.numberOfLeadingZeros(w);
    unary(width - k - 1);
    write(w, width - 1); // the leading one is the unary part's terminator
  }

  /** The bits written, zero-padded to whole bytes. */
  byte[] toBytes() {
    byte[] out = Arrays.copyOf(bytes, size + (held > 0 ? 1 : 0));
    if (held > 0) {
      out[size] = (byte) (window >>> 56);
    }
    return out;
  }
}
