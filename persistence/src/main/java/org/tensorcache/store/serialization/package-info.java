/**
 * Kryo serialization of Pekko messages, events and snapshots: the {@link
 * org.tensorcache.store.serialization.KryoSerializable} marker binds a type to {@link
 * org.tensorcache.store.serialization.KryoSerializer}, which writes only classes registered with a
 * fixed id under {@code tensorcache.kryo.classes}.
 */
package org.tensorcache.store.serialization;
