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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.serialization.KryoFactory;
import org.tensorcache.store.serialization.KryoSettings;

/**
 * The ways a lookup reply ({@code long[]} indices, per field an array of its dtype, in an {@code
 * Object[]}) is coded. The raw and CBOR codecs carry F32 fields only, as the benchmark's replies.
 */
final class ReplyCodecs {
  /**
   * Jackson CBOR over {@link CborReply}, which types the fields as {@code float[]}: Jackson writes
   * an {@code Object[]} of {@code float[]} as arrays of numbers but reads them back as lists of
   * {@code Double}, since nothing in the bytes or the declared type names the array type.
   */
  private static final ObjectMapper CBOR = new CBORMapper();

  private record CborReply(long[] indices, float[][] values) {}

  private ReplyCodecs() {}

  /** What crosses the network for a lookup: a shard's reply of the same arrays. */
  static StatusReply<ShardActor.Computed> wire(LookupActor.Values reply) {
    return StatusReply.success(new ShardActor.Computed(reply.indices(), reply.values()));
  }

  /** The fields of {@code reply} as {@code float[]}; a field of another dtype is rejected. */
  private static float[][] floatFields(LookupActor.Values reply) {
    Object[] fields = reply.values();
    float[][] out = new float[fields.length][];
    for (int f = 0; f < fields.length; f++) {
      if (!(fields[f] instanceof float[] floats)) {
        throw new IllegalArgumentException(
            "field " + f + " of the reply is " + typeOf(fields[f]) + ", expected float[]");
      }
      out[f] = floats;
    }
    return out;
  }

  private static String typeOf(Object field) {
    return field == null ? "null" : field.getClass().getSimpleName();
  }

  /**
   * Raw binary: the index count, the indices, the field count, then each field's length and floats,
   * all little-endian, with bulk buffer views (no per-element calls).
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
    Object[] values = new Object[checkedLength(in, 4)];
    for (int f = 0; f < values.length; f++) {
      float[] field = new float[checkedLength(in, 4)];
      in.asFloatBuffer().get(field);
      in.position(in.position() + 4 * field.length);
      values[f] = field;
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes left after a reply");
    }
    return new LookupActor.Values(indices, values);
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

  static LookupActor.Values cborDecode(byte[] bytes) throws IOException {
    CborReply r = CBOR.readValue(bytes, CborReply.class);
    return new LookupActor.Values(
        r.indices(), Arrays.copyOf(r.values(), r.values().length, Object[].class));
  }

  /**
   * Per batch size, the bytes of a reply in each codec, after checking, before anything is timed,
   * that each reads back what it wrote and that {@link ProductKryo} writes what Pekko's serializer
   * writes; under {@code serializers}, the classes Pekko picks.
   */
  static Map<String, Map<String, Object>> checkedSizes(List<String> batches) throws Exception {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    ProductKryo kryo = new ProductKryo();
    try (Pekko pekko = new Pekko()) {
      for (String batch : batches) {
        LookupActor.Values reply = Fixtures.reply(Integer.parseInt(batch));
        byte[] bytes = kryo.write(reply);
        if (!Arrays.equals(bytes, pekko.toBinary(reply))) {
          throw new IllegalStateException("the project's Kryo set up here writes other bytes");
        }
        check("pekko", reply, (LookupActor.Values) pekko.roundTrip(reply));
        check("kryo", reply, kryo.read(bytes, LookupActor.Values.class));
        var c = (ShardActor.Computed) ((StatusReply<?>) pekko.roundTrip(wire(reply))).getValue();
        check("kryo wire", reply, new LookupActor.Values(c.indices(), c.values()));
        check("raw", reply, rawDecode(rawEncode(reply)));
        check("cbor", reply, cborDecode(cborEncode(reply)));
        out.put(
            batch,
            Map.of(
                "kryo", bytes.length,
                "kryo_wire", pekko.toBinary(wire(reply)).length,
                "raw", rawEncode(reply).length,
                "cbor", cborEncode(reply).length));
      }
      LookupActor.Values reply = Fixtures.reply(1);
      out.put(
          "serializers",
          new TreeMap<>(
              Map.of(
                  "LookupActor.Values", pekko.serializerOf(reply),
                  "StatusReply<ShardActor.Computed>", pekko.serializerOf(wire(reply)))));
    }
    return out;
  }

  private static void check(String codec, LookupActor.Values sent, LookupActor.Values got) {
    if (!Arrays.equals(sent.indices(), got.indices())
        || !Arrays.deepEquals(sent.values(), got.values())) {
      throw new IllegalStateException(
          codec
              + " did not read back the reply of "
              + sent.indices().length
              + " indices: read fields "
              + Arrays.stream(got.values()).map(ReplyCodecs::typeOf).toList());
    }
  }

  /**
   * The project's Kryo as its Pekko serializer sets it up and drives it: the registrations of
   * {@code tensorcache.kryo}, {@code KryoFactory}, one reused Unsafe output of the configured size,
   * the leftover-bytes check on read. Only Pekko's lookups around it (serializer, manifest, pool)
   * are left out; {@link Pekko} has them.
   */
  static final class ProductKryo {
    private final Kryo kryo;
    private final UnsafeOutput output;

    ProductKryo() {
      KryoSettings settings =
          KryoSettings.fromConfig(ConfigFactory.load(), ReplyCodecs.class.getClassLoader());
      kryo = KryoFactory.create(settings, null); // no ActorRefResolver: a reply holds no actor ref
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
   * Pekko's serialization on a local ActorSystem with the project's configuration, called as
   * remoting calls it: find the serializer production binds the message to, take its manifest,
   * write; read by serializer id and manifest.
   */
  static final class Pekko implements AutoCloseable {
    private final ActorSystem<Void> system;
    private final Serialization serialization;

    Pekko() {
      String local =
          "pekko.actor.provider = local\npekko.loglevel = WARNING\n"
              + "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off";
      system =
          ActorSystem.create(
              Behaviors.empty(),
              "micro",
              ConfigFactory.parseString(local).withFallback(ConfigFactory.load()));
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
