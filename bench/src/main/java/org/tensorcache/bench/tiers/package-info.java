/**
 * The memory-tiers benchmark's parts ({@code bench --only tiers}): nodes with a hot-tier budget and
 * a prefetch depth, a trainer's steps through a session, random lookups, and the plain array that
 * is their physical limit, every value checked.
 */
package org.tensorcache.bench.tiers;
