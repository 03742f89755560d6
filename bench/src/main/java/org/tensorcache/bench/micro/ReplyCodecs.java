package org.tensorcache.bench.micro;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.unsafe.UnsafeInput;
import com.esotericsoftware.kryo.unsafe.UnsafeOutput;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.databind.CBORMapper;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.store.serialization.KryoFactory;
import org.tensorcache.store.serialization.KryoSettings;

/**
 * The ways a lookup reply ({@code long[]} indices, per field a {@code float[]}) is coded. The reply
 * holds its fields as an {@code Object[]} (one array per field, of the field's dtype); the raw and
 * CBOR codecs here carry F32 fields only, which is what the benchmark's replies hold.
 */
final class ReplyCodecs {
  /** Jackson CBOR over {@link CborReply}: records need no annotations. */
  static final ObjectMapper CBOR = new CBORMapper();

  /**
   * What CBOR carries: the reply with its fields typed as {@code float[]}. Jackson writes the
   * reply's {@code Object[]} of {@code float[]} as nested arrays of numbers, but reads them back as
   * lists of {@code Double}: nothing in the bytes or the declared type names the array type.
   */
  record CborReply(long[] indices, float[][] values) {}

  private ReplyCodecs() {}

  /**
   * The fields of {@code reply} as {@code float[]}; a field of another dtype is rejected, naming
   * it.
   */
  static float[][] floatFields(LookupActor.Values reply) {
    Object[] fields = reply.values();
    float[][] out = new float[fields.length][];
    for (int f = 0; f < fields.length; f++) {
      if (!(fields[f] instanceof float[] floats)) {
        throw new IllegalArgumentException(
            "field "
                + f
                + " of the reply is "
                + (fields[f] == null ? "null" : fields[f].getClass().getSimpleName())
                + ", expected float[] (these codecs carry F32 fields only)");
      }
      out[f] = floats;
    }
    return out;
  }

  /**
   * A reply of {@code indices} and {@code fields}, the fields in an {@code Object[]} as a node's.
   */
  static LookupActor.Values reply(long[] indices, float[][] fields) {
    return new LookupActor.Values(indices, Arrays.copyOf(fields, fields.length, Object[].class));
  }

  /**
   * Raw binary: the index count, the indices, the field count, then each field's length and floats,
   * all little-endian, written and read with bulk buffer views (no per-element calls).
   */
  static byte[] rawEncode(LookupActor.Values reply) {
    long[] indices = reply.indices();
    float[][] values = floatFields(reply);
    int size = 4 + 8 * indices.length + 4;
    for (float[] field : values) {
      size += 4 + 4 * field.length;
    }
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(indices.length);
    out.asLongBuffer().put(indices);
    out.position(out.position() + 8 * indices.length);
    out.putInt(values.length);
    for (float[] field : values) {
      out.putInt(field.length);
      out.asFloatBuffer().put(field);
      out.position(out.position() + 4 * field.length);
    }
    return out.array();
  }

  /** Reads what {@link #rawEncode} wrote; a length that does not fit the bytes is rejected. */
  static LookupActor.Values rawDecode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    long[] indices = new long[checkedLength(in, 8)];
    in.asLongBuffer().get(indices);
    in.position(in.position() + 8 * indices.length);
    float[][] values = new float[checkedLength(in, 4)][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[checkedLength(in, 4)];
      in.asFloatBuffer().get(values[f]);
      in.position(in.position() + 4 * values[f].length);
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes left after a reply");
    }
    return reply(indices, values);
  }

  private static int checkedLength(ByteBuffer in, int elementBytes) {
    int n = in.getInt();
    if (n < 0 || (long) n * elementBytes > in.remaining()) {
      throw new IllegalArgumentException("length " + n + " does not fit " + in.remaining());
    }
    return n;
  }

  static byte[] cborEncode(LookupActor.Values reply) throws IOException {
    return CBOR.writeValueAsBytes(new CborReply(reply.indices(), floatFields(reply)));
  }

  /** Reads what {@link #cborEncode} wrote. */
  static LookupActor.Values cborDecode(byte[] bytes) throws IOException {
    CborReply r = CBOR.readValue(bytes, CborReply.class);
    return reply(r.indices(), r.values());
  }

  /**
   * The project's Kryo exactly as its Pekko serializer sets it up and drives it: the registrations
   * of {@code tensorcache.kryo} from the configuration, {@code KryoFactory}, one reused Unsafe
   * output of the configured size, and the leftover-bytes check on read. It skips only Pekko's
   * lookups around it (serializer, manifest, pool), which {@link Pekko} includes.
   */
  static final class ProductKryo {
    private final Kryo kryo;
    private final UnsafeOutput output;

    ProductKryo() {
      KryoSettings settings =
          KryoSettings.fromConfig(ConfigFactory.load(), ReplyCodecs.class.getClassLoader());
      // no ActorRefResolver: a reply holds no actor ref
      kryo = KryoFactory.create(settings, null);
      output = new UnsafeOutput(settings.bufferSize(), settings.maxBufferSize());
    }

    byte[] write(Object message) {
      output.reset();
      kryo.writeObject(output, message);
      return output.toBytes();
    }

    <T> T read(byte[] bytes, Class<T> type) {
      UnsafeInput input = new UnsafeInput(bytes);
      T message = kryo.readObject(input, type);
      if (input.position() != bytes.length) {
        throw new IllegalArgumentException(
            (bytes.length - input.position()) + " bytes left over after reading the message");
      }
      return message;
    }
  }

  /**
   * Pekko's serialization on a local ActorSystem with the project's reference configuration, so
   * messages go to the serializer production binds them to (Kryo for {@code KryoSerializable},
   * Pekko's own for {@code StatusReply}, which wraps its payload's serializer), the way remoting
   * calls it: find the serializer, take its manifest, write; read by serializer id and manifest.
   */
  static final class Pekko implements AutoCloseable {
    private final ActorSystem<Void> system;
    private final Serialization serialization;

    Pekko() {
      system =
          ActorSystem.create(
              Behaviors.empty(),
              "micro",
              ConfigFactory.parseString(
                      "pekko.actor.provider = local\n"
                          + "pekko.loglevel = WARNING\n"
                          + "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off")
                  .withFallback(ConfigFactory.load()));
      serialization = SerializationExtension.get(Adapter.toClassic(system));
    }

    byte[] toBinary(Object message) {
      return serialization.findSerializerFor(message).toBinary(message);
    }

    /** Writes {@code message} and reads it back, as a sending and a receiving node would. */
    Object roundTrip(Object message) {
      Serializer serializer = serialization.findSerializerFor(message);
      byte[] bytes = serializer.toBinary(message);
      String manifest = Serializers.manifestFor(serializer, message);
      return serialization.deserialize(bytes, serializer.identifier(), manifest).get();
    }

    /** The serializer class production uses for {@code message}. */
    String serializerOf(Object message) {
      return serialization.findSerializerFor(message).getClass().getName();
    }

    @Override
    public void close() throws Exception {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get();
    }
  }
}
