package org.tensorcache.actors.lookup;

import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The values part of the lookup port's OK replies to GET and NEXT ({@link LookupWire}): from
 * version 3 on each field's elements tagged with its dtype's code, in versions 1 and 2 F32 only.
 *
 * <pre>
 * values (version 3)    := fields:u16 (dtype:u8 count:i32 element * count) * fields
 * values (versions 1-2) := fields:u16 (floats:i32 f32 * floats) * fields
 * </pre>
 */
public final class LookupValues {
  private LookupValues() {}

  /**
   * Checks that a reply in {@code version} can carry the values of {@code spec}: versions 1 and 2
   * carry F32 only, so any other dtype is a BAD_REQUEST that names the field and the version
   * needed.
   */
  public static void checkVersionCarries(byte version, String cacheId, CacheSpec spec) {
    if (version >= LookupWire.VERSION_3) {
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
