/**
 * The lowest actor package: what a node knows and holds (registered caches with their published
 * blocks, settings, executors and runners), range ids, and the replicated block (a delta CRDT) with
 * its codec and segment I/O; how each cache is replicated ({@link
 * org.tensorcache.actors.cache.Replication}) and the read views it gathers from. It imports no
 * other actor package.
 */
package org.tensorcache.actors.cache;
