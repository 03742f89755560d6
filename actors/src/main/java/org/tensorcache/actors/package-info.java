/**
 * TensorCache's cluster actors. {@link org.tensorcache.actors.TensorCache#start} is the composition
 * root: it wires the packages below, and nothing imports it. Each package imports only packages
 * listed before it (a test checks this order):
 *
 * <ol>
 *   <li>{@code cache}: the node's state (registered caches and their published blocks, settings,
 *       executors and runners), range ids, the replicated block CRDT with its codec, segment I/O,
 *       and each cache's {@code Replication} (by value or by reference) with the read views;
 *   <li>{@code replica}: the actor that publishes the replicated blocks, and the tier reporter;
 *   <li>{@code shard}: the sharded entity that computes one range;
 *   <li>{@code coordinator}: the singleton that drives fills, persists and restores segments;
 *   <li>{@code session}: trainer sessions, sharded and event-sourced, and their sampler;
 *   <li>{@code lookup}: the one lookup path, the lookup actor, the wire codec and the lookup port;
 *   <li>{@code client}: the trainer's API on a member, and the client for non-members.
 * </ol>
 */
package org.tensorcache.actors;
