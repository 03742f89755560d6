/**
 * The actor that keeps the node's read view of the gossiped blocks current, and the actor that
 * reports its hot tier.
 */
package org.tensorcache.actors.replica;
