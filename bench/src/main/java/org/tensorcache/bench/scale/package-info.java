/**
 * Memory and scaling of the cache with a synthetic runner ({@code bench --only scale}): bytes per
 * cached float, fill throughput and lookup latency by data set size and by number of nodes.
 */
package org.tensorcache.bench.scale;
