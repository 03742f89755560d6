/**
 * The in-memory values of one range, with a presence bitset and a MAX merge that makes blocks a
 * state-based CRDT.
 */
package org.tensorcache.store.block;
