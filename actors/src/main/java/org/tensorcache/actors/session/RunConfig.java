package org.tensorcache.actors.session;

import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The configuration that every rank of a training run shares and that never changes during the run;
 * a session records it at its first open and holds every later open to it.
 *
 * @param examples number of examples of the dataset
 * @param seed seed of the epoch orders
 * @param globalBatch examples per global step, across all ranks
 * @param cacheId the tensor cache the run reads its values from
 */
public record RunConfig(long examples, long seed, int globalBatch, String cacheId)
    implements KryoSerializable {}
