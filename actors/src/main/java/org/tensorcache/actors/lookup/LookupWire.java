package org.tensorcache.actors.lookup;

import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The binary protocol of the lookup port, both directions, used by the server ({@link
 * LookupEndpoint}) and by the client for non-members: over one TCP connection, a request, then its
 * reply, then the next request, each in one {@link LookupFrames frame}. Everything is
 * little-endian, so that indices and values are bulk copies on common CPUs.
 *
 * <pre>
 * request  := version:u8 op:u8 cache:str body
 *   op GET      body := count:i32 index:i64 * count
 *   op DESCRIBE body := (empty)
 *   op AUTH     body := token:str                  (version 3; cache is empty)
 *   op INPUTS   body := (empty)                    (version 4, {@link LookupInputs})
 * reply    := status:u8 body
 *   OK to GET      body := values
 *   values (version 3)    := fields:u16 (dtype:u8 count:i32 element * count) * fields
 *   values (versions 1-2) := fields:u16 (floats:i32 f32 * floats) * fields
 *                          fields in the cache's field order; versions 1 and 2 serve F32 fields only
 *   OK to DESCRIBE body := name:str n:i64 rangeSize:i32 fields:u16 (name:str dtype:str rank:u8
 *                          dim:i32 * rank) * fields
 *   OK to INPUTS   body := inputs:str            a JSON object of strings
 *   any error      body := message:str
 * str      := length:u16 UTF-8 bytes
 * </pre>
 *
 * A BAD_REQUEST or FAILED reply leaves the connection usable; after a PROTOCOL error the server
 * closes it.
 */
public final class LookupWire {
  /** The first protocol version: GET and DESCRIBE; a node answers it as long as it lives. */
  public static final byte VERSION = 1;

  /** Adds the trainer-session ops of {@link SessionWire}. */
  public static final byte VERSION_2 = 2;

  /** Values of every dtype, each field's tagged with its dtype's code; AUTH. */
  public static final byte VERSION_3 = 3;

  /** The current version: version 3 and INPUTS, a cache's recorded inputs. */
  public static final byte VERSION_4 = 4;

  /** Request ops. */
  public static final byte GET = 1, DESCRIBE = 2;

  /**
   * The op that presents a port's token, from protocol version 3 on: on a port with a token, the
   * first request of every connection; answered OK with an empty body, or PROTOCOL and closed.
   */
  public static final byte AUTH = 6;

  /** The op that asks for a cache's recorded inputs, from protocol version 4 on. */
  public static final byte INPUTS = 7;

  /** Reply statuses. */
  public static final byte OK = 0, BAD_REQUEST = 1, FAILED = 2, PROTOCOL = 3;

  private LookupWire() {}

  /**
   * A decoded request: {@code indices} only for a GET, {@code session} only for a session op,
   * {@code token} only for an AUTH; the reply takes the layout of its {@code version}.
   */
  public record Request(
      byte version,
      byte op,
      String cacheId,
      long[] indices,
      SessionWire.Args session,
      String token) {}

  /** The longest request for batches of up to {@code maxBatch} indices. */
  public static int maxRequest(int maxBatch) {
    // version, op, the longest cache id and the count with the indices, or the longest run id
    return (int) Math.min(LookupFrames.MAX_FRAME, 32 + 2 * 0xffffL + 8L * maxBatch);
  }

  // ---- requests

  /**
   * Builds a GET in {@code version} of {@code indices} of the cache whose id is {@code cacheId}
   * (UTF-8); the reply has that version's layout.
   */
  public static ByteBuffer encodeGet(
      LookupFrames frames, byte version, byte[] cacheId, long[] indices) {
    ByteBuffer b = frames.start(2 + 2 + cacheId.length + 4 + indices.length * Long.BYTES);
    b.put(version).put(GET);
    putStr(b, cacheId);
    b.putInt(indices.length);
    b.asLongBuffer().put(indices);
    return b.position(b.limit());
  }

  /** Builds a DESCRIBE of the cache whose id is {@code cacheId} (UTF-8). */
  public static ByteBuffer encodeDescribe(LookupFrames frames, byte[] cacheId) {
    ByteBuffer b = frames.start(2 + 2 + cacheId.length).put(VERSION).put(DESCRIBE);
    return putStr(b, cacheId);
  }

  /** Builds an AUTH (protocol version 3) presenting {@code token}. */
  public static ByteBuffer encodeAuth(LookupFrames frames, String token) {
    byte[] t = utf8(token);
    ByteBuffer b = frames.start(2 + 2 + 2 + t.length).put(VERSION_3).put(AUTH);
    return putStr(putStr(b, new byte[0]), t);
  }

  /** Reads a request; a malformed one is a {@link ProtocolException} that says what is wrong. */
  public static Request decodeRequest(ByteBuffer frame) throws ProtocolException {
    try {
      byte version = frame.get();
      if (version < VERSION || version > VERSION_4) {
        throw new ProtocolException(
            LookupRefusedException.VERSION + version + ", expected 1, 2, 3 or 4");
      }
      byte op = frame.get();
      String cacheId = getStr(frame);
      if (op == DESCRIBE) {
        return new Request(version, op, cacheId, null, null, null);
      }
      if (SessionWire.isSessionOp(op) && version >= VERSION_2) {
        return new Request(version, op, cacheId, null, SessionWire.decode(op, frame), null);
      }
      if (op == AUTH && version >= VERSION_3 || op == INPUTS && version >= VERSION_4) {
        String token = op == AUTH ? getStr(frame) : null;
        if (frame.hasRemaining()) {
          throw new ProtocolException(frame.remaining() + " bytes after the request of op " + op);
        }
        return new Request(version, op, cacheId, null, null, token);
      }
      if (op != GET) {
        throw new ProtocolException(
            "op "
                + op
                + " in protocol version "
                + version
                + ", expected "
                + GET
                + " or "
                + DESCRIBE
                + (version >= VERSION_2 ? " or a session op 3..5" : "")
                + (version >= VERSION_3 ? " or AUTH 6" : "")
                + (version >= VERSION_4 ? " or INPUTS 7" : ""));
      }
      int count = frame.getInt();
      if (count < 0 || (long) count * Long.BYTES != frame.remaining()) {
        throw new ProtocolException(
            count + " indices announced, " + frame.remaining() + " bytes of them sent");
      }
      long[] indices = new long[count];
      frame.asLongBuffer().get(indices);
      return new Request(version, op, cacheId, indices, null, null);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated request");
    }
  }

  // ---- what a request may ask

  /**
   * Checks that a reply in {@code version} can carry the values of {@code count} indices of {@code
   * spec}: its dtypes ({@link #checkVersionCarries}) and its size, within one frame (else the error
   * names the largest batch that fits).
   */
  public static void checkCarries(byte version, String cacheId, CacheSpec spec, int count) {
    checkVersionCarries(version, cacheId, spec);
    int rowBytes = LookupChecks.rowBytes(spec);
    long replyBytes = 3 + (long) count * rowBytes + 5L * spec.fields().size();
    if (replyBytes > LookupFrames.MAX_FRAME) {
      throw new IllegalArgumentException(
          String.format(
              "reply of %d bytes for %d indices of cache '%s' is over the maximum frame of %d"
                  + " bytes, expected at most %d indices",
              replyBytes,
              count,
              cacheId,
              LookupFrames.MAX_FRAME,
              (LookupFrames.MAX_FRAME - 64) / rowBytes));
    }
  }

  /**
   * Checks that a reply in {@code version} can carry the values of {@code spec}: versions 1 and 2
   * carry F32 only, so any other dtype is a BAD_REQUEST that names the field and the version
   * needed.
   */
  public static void checkVersionCarries(byte version, String cacheId, CacheSpec spec) {
    if (spec.perToken()) {
      throw new IllegalArgumentException(
          String.format(
              "field '%s' of cache '%s' is per-token: protocol version 5 is needed, the request is"
                  + " version %d",
              spec.fields().get(0).name(), cacheId, version));
    }
    if (version >= VERSION_3) {
      return;
    }
    for (FieldSpec f : spec.fields()) {
      if (f.dtype() != DType.F32) {
        throw new IllegalArgumentException(
            String.format(
                "field '%s' of cache '%s' is %s: protocol version 3 is needed for fields other"
                    + " than F32",
                f.name(), cacheId, f.dtype().safetensorsName()));
      }
    }
  }

  // ---- strings

  /** Bytes of {@code s} as a {@code str}, or an error when it is too long. */
  public static byte[] utf8(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) {
      throw new IllegalArgumentException(
          "string of " + b.length + " UTF-8 bytes, expected at most 65535: " + s.substring(0, 40));
    }
    return b;
  }

  static ByteBuffer putStr(ByteBuffer buffer, byte[] b) {
    return buffer.putShort((short) b.length).put(b);
  }

  static String getStr(ByteBuffer buffer) throws ProtocolException {
    int length = buffer.getShort() & 0xffff;
    if (length > buffer.remaining()) {
      throw new ProtocolException(
          "string of " + length + " bytes, only " + buffer.remaining() + " left in the frame");
    }
    int at = buffer.position();
    buffer.position(at + length);
    return new String(buffer.array(), buffer.arrayOffset() + at, length, StandardCharsets.UTF_8);
  }
}
