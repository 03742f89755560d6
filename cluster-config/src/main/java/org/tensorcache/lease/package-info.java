/**
 * Downing with a lease: Pekko Coordination leases held in the journal's PostgreSQL database (the
 * lease that the Split Brain Resolver's {@code lease-majority} takes before it downs the other side
 * of a partition), and the downing provider that runs the resolver and downs a member cut off one
 * way alone.
 */
package org.tensorcache.lease;
