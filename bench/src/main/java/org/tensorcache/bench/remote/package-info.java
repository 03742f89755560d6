/** Remote lookups from a client without a replica, next to Redis MGET of the same values. */
package org.tensorcache.bench.remote;
