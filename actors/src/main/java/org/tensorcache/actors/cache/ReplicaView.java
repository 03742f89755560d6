package org.tensorcache.actors.cache;

import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Immutable per-range blocks, published by one actor and read by any thread: a lookup on this node
 * is a memory gather on the caller's thread, with no mailbox in between. A published block is
 * replaced, never mutated. The blocks live in the node's {@link CacheRegistry}.
 */
public final class ReplicaView {
  private final CacheRegistry registry;

  /** The view of the caches in {@code registry}. */
  public ReplicaView(CacheRegistry registry) {
    this.registry = registry;
  }

  /** Publishes {@code block} as the current view of its range; the caller must not mutate it. */
  public void publish(String cacheId, Block block) {
    registry.get(cacheId).blocks().setRelease(block.range(), block);
  }

  /** The current block of a range, or null when nothing of it has arrived yet. */
  public Block block(String cacheId, int range) {
    return registry.get(cacheId).blocks().get(range);
  }

  /** The spec of a registered cache. */
  public CacheSpec spec(String cacheId) {
    return registry.definition(cacheId).spec();
  }
}
