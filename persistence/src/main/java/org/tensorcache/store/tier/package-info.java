/**
 * The memory tiers of a node: hot blocks in memory within a budget shared by all caches, evicted by
 * LRU or LFU and published for lookups ({@link org.tensorcache.store.tier.HotTier}), and warm
 * segment files read through memory mappings ({@link org.tensorcache.store.tier.MappedSegment});
 * the cold tier, another node, is not here. Nothing else in this module depends on this package.
 */
package org.tensorcache.store.tier;
