package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;

/**
 * Kryo's serializer of an array class, whose read first checks the announced length against the
 * bytes left ({@link BoundedInput#checkLength}): Kryo's own array serializers allocate the array
 * from the length alone.
 */
final class BoundedArraySerializer<T> extends Serializer<T> {
  private final Serializer<T> array;

  BoundedArraySerializer(Serializer<T> array) {
    super(array.getAcceptsNull(), array.isImmutable());
    this.array = array;
  }

  @Override
  public void write(Kryo kryo, Output output, T object) {
    array.write(kryo, output, object);
  }

  @Override
  public T read(Kryo kryo, Input input, Class<? extends T> type) {
    if (input instanceof BoundedInput bounded) {
      int at = bounded.position();
      bounded.checkLength(bounded.readVarInt(true), type.getSimpleName());
      bounded.setPosition(at);
    }
    return array.read(kryo, input, type);
  }

  @Override
  public T copy(Kryo kryo, T original) {
    return array.copy(kryo, original);
  }
}
