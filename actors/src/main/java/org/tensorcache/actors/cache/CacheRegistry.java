package org.tensorcache.actors.cache;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.tensorcache.store.block.Block;

/**
 * The caches a node knows, each with the slots where the node's read view publishes its ranges'
 * blocks: one map, so that a cache is known to every part of the node or to none.
 */
public final class CacheRegistry {
  private final Map<String, Registered> caches = new ConcurrentHashMap<>();

  /**
   * A registered cache and its published blocks, one slot per range. {@code shift} is log2 of the
   * range size when it is a power of two, else -1.
   */
  public record Registered(
      CacheDefinition definition, AtomicReferenceArray<Block> blocks, int shift) {
    /** The range that holds {@code index}. */
    public int rangeOf(long index) {
      // a 64-bit division costs more than the rest of a gather: shift where we can
      return shift >= 0 ? (int) (index >>> shift) : (int) (index / definition.spec().rangeSize());
    }
  }

  /** Makes a cache known; registering the same definition again does nothing. */
  public void register(CacheDefinition definition) {
    int size = definition.spec().rangeSize();
    int shift = Integer.bitCount(size) == 1 ? Integer.numberOfTrailingZeros(size) : -1;
    Registered fresh =
        new Registered(
            definition, new AtomicReferenceArray<>(definition.spec().rangeCount()), shift);
    Registered before = caches.putIfAbsent(definition.cacheId(), fresh);
    if (before != null && before.definition() != definition) {
      throw new IllegalStateException("cache " + definition.cacheId() + " is already registered");
    }
  }

  /** The registered cache {@code cacheId}, or an error naming the known caches. */
  public Registered get(String cacheId) {
    Registered r = caches.get(cacheId);
    if (r == null) {
      throw new IllegalArgumentException(
          "unknown cache '" + cacheId + "', expected one of " + caches.keySet());
    }
    return r;
  }

  /** The definition of {@code cacheId}, or an error naming the known caches. */
  public CacheDefinition definition(String cacheId) {
    return get(cacheId).definition();
  }

  /** Every registered cache. */
  public List<CacheDefinition> definitions() {
    return caches.values().stream().map(Registered::definition).toList();
  }
}
