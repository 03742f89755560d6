package org.tensorcache.actors.lookup;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The binary protocol of {@link LookupEndpoint}: over one TCP connection, a request, then its
 * reply, then the next request. Every frame is an int32 length of the rest, then the rest;
 * everything is little-endian, so that indices and values are bulk copies on common CPUs.
 *
 * <pre>
 * request  := version:u8 op:u8 cache:str body
 *   op GET      body := count:i32 index:i64 * count
 *   op DESCRIBE body := (empty)
 * reply    := status:u8 body
 *   OK to GET      body := fields:u16 (floats:i32 f32 * floats) * fields, in the cache's field order
 *   OK to DESCRIBE body := name:str n:i64 rangeSize:i32 fields:u16 (name:str dtype:str rank:u8
 *                          dim:i32 * rank) * fields
 *   any error      body := message:str
 * str      := length:u16 UTF-8 bytes
 * </pre>
 *
 * A BAD_REQUEST or FAILED reply leaves the connection usable; after a PROTOCOL error the server
 * closes it.
 */
public final class LookupWire {
  /** The protocol version this code speaks. */
  public static final byte VERSION = 1;

  /** Request ops. */
  public static final byte GET = 1, DESCRIBE = 2;

  /** Reply statuses. */
  public static final byte OK = 0, BAD_REQUEST = 1, FAILED = 2, PROTOCOL = 3;

  /** The largest frame either side reads or writes. */
  public static final int MAX_FRAME = 256 << 20;

  private LookupWire() {}

  /** A reusable frame buffer of one connection side: read a frame, or build one and send it. */
  public static final class Frames {
    private byte[] bytes = new byte[8192];

    /** Reads one frame; the buffer holds its body (after the length) until the next call. */
    public ByteBuffer read(InputStream in) throws IOException {
      return read(in, MAX_FRAME);
    }

    /** Reads one frame of at most {@code maxFrame} bytes, so a bad peer cannot make us allocate. */
    public ByteBuffer read(InputStream in, int maxFrame) throws IOException {
      readFully(in, bytes, 4);
      int length = ByteBuffer.wrap(bytes, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      if (length < 1 || length > maxFrame) {
        throw new java.net.ProtocolException(
            "frame of " + length + " bytes, expected 1.." + maxFrame);
      }
      ensure(length);
      readFully(in, bytes, length);
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
  }

  /** Bytes of {@code s} as a {@code str}, or an error when it is too long. */
  public static byte[] utf8(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) {
      throw new IllegalArgumentException(
          "string of " + b.length + " UTF-8 bytes, expected at most 65535: " + s.substring(0, 40));
    }
    return b;
  }

  /** Writes {@code b} as a {@code str}. */
  public static void putStr(ByteBuffer buffer, byte[] b) {
    buffer.putShort((short) b.length).put(b);
  }

  /** Reads a {@code str}. */
  public static String getStr(ByteBuffer buffer) throws java.net.ProtocolException {
    int length = buffer.getShort() & 0xffff;
    if (length > buffer.remaining()) {
      throw new java.net.ProtocolException(
          "string of " + length + " bytes, only " + buffer.remaining() + " left in the frame");
    }
    String s =
        new String(
            buffer.array(),
            buffer.arrayOffset() + buffer.position(),
            length,
            StandardCharsets.UTF_8);
    buffer.position(buffer.position() + length);
    return s;
  }

  /** Builds an error reply with {@code status} and {@code message}. */
  public static ByteBuffer error(Frames frames, byte status, String message) {
    byte[] text = utf8(message.length() > 20_000 ? message.substring(0, 20_000) : message);
    ByteBuffer b = frames.start(1 + 2 + text.length).put(status);
    putStr(b, text);
    return b;
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
