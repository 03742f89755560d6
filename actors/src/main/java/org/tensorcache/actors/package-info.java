/** Cluster actors (shard, coordinator, lookup, trainer session) and the trainer client. */
package org.tensorcache.actors;
