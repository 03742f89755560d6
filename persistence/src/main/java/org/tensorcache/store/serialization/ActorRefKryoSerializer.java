package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;

/**
 * Writes a typed {@link ActorRef} as its serialization format (the full actor path with host and
 * uid) and resolves it again with the receiving system's {@link ActorRefResolver}.
 */
public final class ActorRefKryoSerializer extends Serializer<ActorRef<?>> {
  private final ActorRefResolver resolver;

  /**
   * Creates a serializer that resolves refs with the given resolver; without one (Kryo used outside
   * an ActorSystem) a ref can be neither written nor read.
   */
  public ActorRefKryoSerializer(ActorRefResolver resolver) {
    super(false, true);
    this.resolver = resolver;
  }

  @Override
  public void write(Kryo kryo, Output output, ActorRef<?> ref) {
    output.writeString(resolver().toSerializationFormat(ref));
  }

  @Override
  public ActorRef<?> read(Kryo kryo, Input input, Class<? extends ActorRef<?>> type) {
    return resolver().resolveActorRef(input.readString());
  }

  private ActorRefResolver resolver() {
    if (resolver == null) {
      throw new KryoException(
          "an ActorRef needs the ActorRefResolver of an ActorSystem; this Kryo instance has none");
    }
    return resolver;
  }
}
