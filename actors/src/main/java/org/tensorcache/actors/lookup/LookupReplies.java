package org.tensorcache.actors.lookup;

import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The replies of the lookup port ({@link LookupWire}), both directions: a status, then an OK's body
 * (the values of a GET or NEXT, a cache's spec) or an error's message. From version 3 on each
 * field's values are tagged with its dtype's code; versions 1 and 2 carry F32 only.
 *
 * <pre>
 * values (version 3)    := fields:u16 (dtype:u8 count:i32 element * count) * fields
 * values (versions 1-2) := fields:u16 (floats:i32 f32 * floats) * fields
 * </pre>
 */
public final class LookupReplies {
  private LookupReplies() {}

  /** Builds the OK reply to a DESCRIBE. */
  public static ByteBuffer encodeSpec(LookupFrames frames, CacheSpec spec) {
    byte[] name = LookupWire.utf8(spec.name());
    int body = 1 + 2 + name.length + 8 + 4 + 2;
    for (FieldSpec f : spec.fields()) {
      body += 2 + LookupWire.utf8(f.name()).length + 2 + f.dtype().safetensorsName().length();
      body += 1 + 4 * f.shape().length;
    }
    ByteBuffer b = frames.start(body).put(LookupWire.OK);
    LookupWire.putStr(b, name);
    b.putLong(spec.n()).putInt(spec.rangeSize()).putShort((short) spec.fields().size());
    for (FieldSpec f : spec.fields()) {
      LookupWire.putStr(b, LookupWire.utf8(f.name()));
      LookupWire.putStr(b, LookupWire.utf8(f.dtype().safetensorsName()));
      b.put((byte) f.shape().length);
      for (int dim : f.shape()) {
        b.putInt(dim);
      }
    }
    return b;
  }

  /**
   * Reads the OK reply to a DESCRIBE; a malformed one, or one of a spec that is not valid, is a
   * {@link ProtocolException}: the peer is not one to trust with the connection.
   */
  public static CacheSpec decodeSpec(ByteBuffer reply) throws ProtocolException {
    try {
      String name = LookupWire.getStr(reply);
      long n = reply.getLong();
      int rangeSize = reply.getInt();
      int count = reply.getShort() & 0xffff;
      List<FieldSpec> fields = new ArrayList<>(count);
      for (int f = 0; f < count; f++) {
        String field = LookupWire.getStr(reply);
        DType dtype = DType.fromSafetensors(LookupWire.getStr(reply));
        int[] shape = new int[reply.get() & 0xff]; // rank:u8
        for (int d = 0; d < shape.length; d++) {
          shape[d] = reply.getInt();
        }
        fields.add(new FieldSpec(field, dtype, shape));
      }
      return new CacheSpec(name, n, fields, rangeSize);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated reply to DESCRIBE");
    } catch (IllegalArgumentException e) {
      throw new ProtocolException("reply to DESCRIBE of no valid cache spec: " + e.getMessage());
    }
  }

  /** Builds an OK reply with an empty body: the answer to an AUTH. */
  public static ByteBuffer encodeOk(LookupFrames frames) {
    return frames.start(1).put(LookupWire.OK);
  }

  /** Builds an error reply with {@code status} and {@code message}. */
  public static ByteBuffer encodeError(LookupFrames frames, byte status, String message) {
    byte[] text =
        LookupWire.utf8(message.length() > 20_000 ? message.substring(0, 20_000) : message);
    return LookupWire.putStr(frames.start(1 + 2 + text.length).put(status), text);
  }

  /**
   * The body of an OK reply, or the error it carries: BAD_REQUEST as an {@link
   * IllegalArgumentException}, FAILED as a {@link LookupFailedException}, anything else as a {@link
   * LookupRefusedException} naming {@code peer}.
   */
  public static ByteBuffer decodeStatus(ByteBuffer reply, Object peer) throws ProtocolException {
    byte status;
    String message;
    try {
      status = reply.get();
      if (status == LookupWire.OK) {
        return reply;
      }
      message = LookupWire.getStr(reply);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated reply from " + peer);
    }
    if (status == LookupWire.BAD_REQUEST) {
      throw new IllegalArgumentException(message);
    }
    if (status == LookupWire.FAILED) {
      throw new LookupFailedException(message, null);
    }
    throw LookupRefusedException.of(peer, message);
  }

  /** Builds the OK reply to a GET in {@code version}: per field, its values in request order. */
  public static ByteBuffer encodeValues(
      LookupFrames frames, byte version, CacheSpec spec, Object[] values) {
    return putValues(
        frames.start(1 + valuesBytes(version, spec, values)).put(LookupWire.OK),
        version,
        spec,
        values);
  }

  /** Bytes of the values part of a reply. */
  static int valuesBytes(byte version, CacheSpec spec, Object[] values) {
    int body = 2;
    for (int f = 0; f < values.length; f++) {
      int tag = version >= LookupWire.VERSION_3 ? 1 : 0;
      body += tag + 4 + FieldArrays.length(values[f]) * spec.fields().get(f).dtype().bytes();
    }
    return body;
  }

  /** Writes per field (its dtype's code from version 3 on) its element count and its elements. */
  static ByteBuffer putValues(ByteBuffer b, byte version, CacheSpec spec, Object[] values) {
    b.putShort((short) values.length);
    for (int f = 0; f < values.length; f++) {
      DType t = spec.fields().get(f).dtype();
      if (version >= LookupWire.VERSION_3) {
        b.put((byte) t.code());
      }
      int n = FieldArrays.length(values[f]);
      b.putInt(n);
      FieldArrays.write(t, values[f], 0, n, b);
    }
    return b;
  }

  /**
   * Reads the version-3 OK reply to a GET of {@code count} indices into {@code out}; a malformed
   * one is a {@link ProtocolException}.
   */
  public static void decodeValues(ByteBuffer reply, CacheSpec spec, int count, Object[] out)
      throws ProtocolException {
    try {
      int fields = reply.getShort() & 0xffff;
      if (fields != out.length) {
        throw new ProtocolException(fields + " fields in the reply, expected " + out.length);
      }
      for (int f = 0; f < fields; f++) {
        FieldSpec field = spec.fields().get(f);
        int code = reply.get();
        if (code != field.dtype().code()) {
          throw new ProtocolException(
              String.format(
                  "dtype code %d for field '%s' in the reply, expected %d (%s)",
                  code, field.name(), field.dtype().code(), field.dtype().safetensorsName()));
        }
        int elements = reply.getInt();
        long expected = (long) count * field.width();
        if (elements != expected) {
          throw new ProtocolException(
              elements + " values of field " + f + " in the reply, expected " + expected);
        }
        FieldArrays.read(field.dtype(), reply, out[f], 0, elements);
      }
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated values in the reply of " + reply.limit() + " bytes");
    }
  }
}
