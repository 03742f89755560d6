package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.unsafe.UnsafeInput;
import com.esotericsoftware.kryo.unsafe.UnsafeOutput;
import com.esotericsoftware.kryo.util.Pool;
import java.io.NotSerializableException;
import java.util.Map;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * Pekko serializer for {@link KryoSerializable} types, over plain Kryo with registration required.
 *
 * <p>The manifest is the registration id of the root class, so a persisted event survives a class
 * rename as long as its id stays. The bytes are written with Kryo's Unsafe streams, which copy
 * primitive arrays in bulk in native byte order: every node of a cluster must share one byte order
 * (all supported platforms are little-endian).
 */
public final class KryoSerializer extends SerializerWithStringManifest {

  /**
   * Identifier of this serializer in every serialized message and journal row; never change it, or
   * stored events become unreadable.
   */
  public static final int IDENTIFIER = 7_771_001;

  private final KryoSettings settings;
  private final Map<Class<?>, Integer> ids;
  private final Pool<PooledKryo> pool;

  /** Creates the serializer; Pekko calls this reflectively with the system it serves. */
  public KryoSerializer(ExtendedActorSystem system) {
    this.settings =
        KryoSettings.fromConfig(system.settings().config(), system.dynamicAccess().classLoader());
    this.ids = settings.idsByClass();
    this.pool =
        new Pool<>(true, false, 2 * Runtime.getRuntime().availableProcessors()) {
          @Override
          protected PooledKryo create() {
            // resolved lazily: serializers are built while the system starts
            return new PooledKryo(
                KryoFactory.create(settings, ActorRefResolver.get(Adapter.toTyped(system))),
                settings);
          }
        };
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object message) {
    return Integer.toString(idOf(message.getClass()));
  }

  @Override
  public byte[] toBinary(Object message) {
    idOf(message.getClass());
    PooledKryo pooled = pool.obtain();
    try {
      return pooled.write(message);
    } catch (KryoException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot serialize "
              + message.getClass().getName()
              + " with Kryo (every class inside it needs an id in "
              + KryoSettings.CLASSES_PATH
              + ", and the message must fit in "
              + settings.maxBufferSize()
              + " bytes): "
              + e.getMessage(),
          e);
    } finally {
      pool.free(pooled);
    }
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    Class<?> type = classOf(manifest);
    PooledKryo pooled = pool.obtain();
    try {
      return pooled.read(bytes, type);
    } catch (KryoException e) {
      throw new IllegalArgumentException(
          "cannot read "
              + bytes.length
              + " bytes as "
              + type.getName()
              + " (Kryo id "
              + manifest
              + "): "
              + e.getMessage(),
          e);
    } finally {
      pool.free(pooled);
    }
  }

  private int idOf(Class<?> type) {
    Integer id = ids.get(type);
    if (id == null) {
      throw new IllegalArgumentException(
          "class "
              + type.getName()
              + " is not registered for Kryo; expected an entry \""
              + type.getName()
              + "\" = <unused id >= "
              + KryoSettings.FIRST_FREE_ID
              + "> in "
              + KryoSettings.CLASSES_PATH);
    }
    return id;
  }

  private Class<?> classOf(String manifest) throws NotSerializableException {
    int id;
    try {
      id = Integer.parseInt(manifest);
    } catch (NumberFormatException e) {
      throw new NotSerializableException(
          "Kryo manifest '" + manifest + "' is not a registration id; expected an integer");
    }
    Class<?> type = settings.classes().get(id);
    if (type == null) {
      throw new NotSerializableException(
          "no class is registered under Kryo id "
              + id
              + " (manifest '"
              + manifest
              + "'); expected one of the ids in "
              + KryoSettings.CLASSES_PATH);
    }
    return type;
  }

  /** A Kryo instance with its own reusable output buffer; used by one thread at a time. */
  private static final class PooledKryo {
    private final Kryo kryo;
    private final KryoSettings settings;
    private final UnsafeOutput output;

    PooledKryo(Kryo kryo, KryoSettings settings) {
      this.kryo = kryo;
      this.settings = settings;
      this.output = new UnsafeOutput(settings.bufferSize(), settings.maxBufferSize());
    }

    byte[] write(Object message) {
      output.reset();
      try {
        kryo.writeObject(output, message);
        return output.toBytes();
      } finally {
        // keep one rare large message from pinning its buffer in the pool
        if (output.getBuffer().length > settings.pooledBufferLimit()) {
          output.setBuffer(new byte[settings.bufferSize()], settings.maxBufferSize());
        }
      }
    }

    Object read(byte[] bytes, Class<?> type) {
      UnsafeInput input = new BoundedInput(bytes);
      Object message = kryo.readObject(input, type);
      if (message == null) {
        // an array's serializer reads a null; a message is never one, so no writer made these
        throw new KryoException("a null message, expected one of " + type.getName());
      }
      if (input.position() != bytes.length) {
        throw new KryoException(
            (bytes.length - input.position()) + " bytes left over after reading the message");
      }
      return message;
    }
  }
}
