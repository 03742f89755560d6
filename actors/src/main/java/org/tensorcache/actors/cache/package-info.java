/** What a node knows of its caches, and the replicated block (a delta CRDT) with its codec. */
package org.tensorcache.actors.cache;
