/**
 * Lookups from a client JVM without a replica: its process, load loop and server node, and the
 * remote part (the lookup port and the lookup actor next to Redis MGET of the same values).
 */
package org.tensorcache.bench.remote;
