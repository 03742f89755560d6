package org.tensorcache.actors.client;

/** One step of a trainer's rank: its indices, in order, and their cached values. */
public record TrainingBatch(long step, long epoch, long[] indices, Batch values) {}
