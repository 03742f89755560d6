/**
 * Pekko Coordination leases held in the journal's PostgreSQL database: the lease that the Split
 * Brain Resolver's {@code lease-majority} takes before it downs the other side of a partition.
 */
package org.tensorcache.lease;
