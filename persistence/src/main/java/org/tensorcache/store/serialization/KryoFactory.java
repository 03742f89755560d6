package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.serializers.RecordSerializer;
import com.esotericsoftware.kryo.util.DefaultClassResolver;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;

/**
 * Builds the one Kryo configuration of the project: registration required with the fixed ids of
 * {@link KryoSettings}, references off, records through their canonical constructor, typed actor
 * refs through {@link ActorRefKryoSerializer}, and arrays through {@link BoundedArraySerializer},
 * so that reading a message allocates no array larger than its bytes can fill.
 */
public final class KryoFactory {
  /** How deep records and arrays may nest in a message, far beyond any message's few levels. */
  public static final int MAX_DEPTH = 64;

  private KryoFactory() {}

  /**
   * Creates a Kryo instance; Kryo is not thread-safe, so each thread or pool slot needs its own.
   *
   * @param resolver resolves actor refs on read; {@code null} outside an ActorSystem, where a
   *     message carrying a ref then fails to serialize
   */
  public static Kryo create(KryoSettings settings, ActorRefResolver resolver) {
    Kryo kryo = new Kryo(new ActorRefClassResolver(), null);
    kryo.setRegistrationRequired(true);
    // messages are trees of values; reference tracking would cost a map lookup per object
    kryo.setReferences(false);
    // messages are shallow trees of records and arrays; bytes nested deeper are corrupt, and would
    // otherwise overflow the reader's stack
    kryo.setMaxDepth(MAX_DEPTH);
    kryo.addDefaultSerializer(Record.class, RecordSerializer.class);
    ActorRefKryoSerializer refs = new ActorRefKryoSerializer(resolver);
    for (Map.Entry<Integer, Class<?>> entry : settings.classes().entrySet()) {
      Class<?> type = entry.getValue();
      if (ActorRef.class.isAssignableFrom(type)) {
        kryo.register(type, refs, entry.getKey());
      } else if (type.isArray()) {
        kryo.register(
            type, new BoundedArraySerializer<>(kryo.getDefaultSerializer(type)), entry.getKey());
      } else {
        kryo.register(type, entry.getKey());
      }
    }
    return kryo;
  }

  /**
   * Gives every implementation of a typed {@link ActorRef} the registration of the {@code ActorRef}
   * interface, so that the internal classes behind refs (local, remote, temporary ask refs) need no
   * registration of their own; and reads classes by registration id only.
   */
  private static final class ActorRefClassResolver extends DefaultClassResolver {
    /**
     * Refuses a class given by name: with registration required the writer gives every class by its
     * id, so a name is corrupt bytes, and reading one would load a class the bytes name.
     */
    @Override
    protected Registration readName(Input input) {
      throw new KryoException(
          "a class given by name at byte " + input.position() + ", expected a registration id");
    }

    @Override
    public Registration getRegistration(Class type) {
      Registration registration = super.getRegistration(type);
      if (registration == null && ActorRef.class.isAssignableFrom(type)) {
        registration = super.getRegistration(ActorRef.class);
      }
      return registration;
    }
  }
}
