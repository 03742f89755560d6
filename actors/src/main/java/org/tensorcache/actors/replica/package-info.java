/**
 * The node's read view of the replicated blocks, the actor that keeps it current, and the actor
 * that reports its hot tier.
 */
package org.tensorcache.actors.replica;
