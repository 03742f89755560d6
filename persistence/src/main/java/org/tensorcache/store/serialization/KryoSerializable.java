package org.tensorcache.store.serialization;

/**
 * Marks a message, event, state or reply that Pekko serializes with {@link KryoSerializer}.
 *
 * <p>The binding lives in this module's {@code reference.conf}. Implementing this interface is not
 * enough on its own: the class, and every non-primitive class it contains, needs a fixed id under
 * {@code tensorcache.kryo.classes}.
 */
public interface KryoSerializable {}
