package org.tensorcache.store.topk;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Reads the bits of a {@link BitWriter} back through a 64-bit window, refusing to read past the end
 * of its bytes.
 */
final class BitReader {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final byte[] bytes;
  private final int end; // the byte after the last readable one
  private int next; // the next byte to move into the window
  private long window; // unread bits, most significant first
  private int held; // how many bits of the window are unread

  BitReader(byte[] bytes, int offset, int length) {
    if (offset < 0 || length < 0 || offset > bytes.length - length) {
      throw new IllegalArgumentException(
          "bytes [" + offset + ", " + (offset + length) + ") of " + bytes.length);
    }
    this.bytes = bytes;
    this.next = offset;
    this.end = offset + length;
  }

  /** Reads {@code count} bits, {@code count} in [0, 56], as an unsigned value. */
  long read(int count) {
    if (held < count) {
      refill();
      if (held < count) {
        throw pastTheEnd();
      }
    }
    if (count == 0) {
      return 0;
    }
    long value = window >>> (64 - count);
    window <<= count;
    held -= count;
    return value;
  }

  /** Reads zero bits up to and including the next one; returns how many zeros there were. */
  int unary() {
    int zeros = 0;
    while (true) {
      if (window != 0) { // the one is among the held bits: the bits below them are zero
        int lead = Long.numberOfLeadingZeros(window);
        window <<= lead + 1;
        held -= lead + 1;
        return zeros + lead;
      }
      zeros += held;
      held = 0;
      refill();
      if (held == 0) {
        throw pastTheEnd();
      }
    }
  }

  /** Reads a value of the Rice code of parameter {@code r}. */
  int rice(int r) {
    long value = ((long) unary() << r) | read(r);
    return checked(value);
  }

  /** Reads a value of the exponential Golomb code of order {@code k}. */
  int expGolomb(int k) {
    int zeros = unary();
    if (zeros + k > 56) {
      throw new IllegalArgumentException("exponential Golomb code of " + (zeros + k + 1) + " bits");
    }
    long w = (1L << (zeros + k)) | read(zeros + k);
    return checked(w - (1L << k));
  }

  /** The bit position, relative to the start of the whole array. */
  long position() {
    return ((long) next << 3) - held;
  }

  private void refill() {
    int take = (64 - held) >>> 3; // the whole bytes the window has room for
    if (take > 0 && end - next >= 8) { // one load of eight bytes, the bits past the room cut off
      int full = held + (take << 3);
      long mask = full == 64 ? -1L : ~(-1L >>> full);
      window |= ((long) LONGS.get(bytes, next) >>> held) & mask;
      next += take;
      held = full;
      return;
    }
    while (held <= 56 && next < end) {
      window |= (bytes[next++] & 0xffL) << (56 - held);
      held += 8;
    }
  }

  private IllegalArgumentException pastTheEnd() {
    return new IllegalArgumentException("encoded row ends after " + end + " bytes, expected more");
  }

  private static int checked(long value) {
    if (value > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("coded value " + value + " is over 2^31-1");
    }
    return (int) value;
  }
}
