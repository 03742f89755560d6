package org.tensorcache.actors.client;

/**
 * One step of a trainer's rank, what it trains on: the session's indices, in order, and their
 * cached values.
 *
 * @param step the global step
 * @param epoch the epoch of the step
 * @param indices the example indices of this rank at the step, in the order of the epoch
 * @param values the cached values of {@code indices}, in the same order
 */
public record TrainingBatch(long step, long epoch, long[] indices, Batch values) {}
