/** The node's read view of the replicated blocks and the actor that keeps it current. */
package org.tensorcache.actors.replica;
