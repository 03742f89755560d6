package org.tensorcache.actors.cache;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorcache.store.block.PublishedBlocks;

/**
 * The caches a node knows, each with the slots where the node's read view publishes its ranges'
 * blocks: one map, so that a cache is known to every part of the node or to none.
 */
public final class CacheRegistry {
  private final Map<String, Registered> caches = new ConcurrentHashMap<>();

  /** A registered cache, its published blocks (one slot per range) and how it is replicated. */
  public record Registered(
      CacheDefinition definition, PublishedBlocks blocks, Replication replication) {}

  /**
   * Makes a cache known, replicated as {@code replication}; registering the same definition again
   * does nothing.
   */
  public void register(CacheDefinition definition, Replication replication) {
    Registered fresh =
        new Registered(
            definition, new PublishedBlocks(definition.spec().rangeCount()), replication);
    Registered before = caches.putIfAbsent(definition.cacheId(), fresh);
    if (before != null && before.definition() != definition) {
      throw new IllegalStateException("cache " + definition.cacheId() + " is already registered");
    }
    if (before == null) {
      replication.registered(definition.cacheId(), definition.spec(), fresh.blocks());
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
