/**
 * The in-memory values of one range, with a presence bitset and a MAX merge that makes blocks a
 * state-based CRDT; the current blocks of a cache as other threads read them, and the lookup's
 * batch gather over them.
 */
package org.tensorcache.store.block;
