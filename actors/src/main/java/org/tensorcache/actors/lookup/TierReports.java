package org.tensorcache.actors.lookup;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.pekko.actor.Address;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.store.tier.HotTier;

/** Reads a node's hot tier into the {@link LookupActor.TierReport} that the lookup actor sends. */
final class TierReports {
  private final TensorCacheNode node;
  private final String address;

  /** Reports of the hot tier of {@code node}, a member at {@code address}. */
  TierReports(TensorCacheNode node, Address address) {
    this.node = node;
    this.address = address.toString();
  }

  /**
   * The hot tier now, with the caches replicated by reference in the order they were registered;
   * gossiped caches are whole in every replica and have no tiers.
   */
  LookupActor.TierReport report() {
    HotTier hot = node.hotTier();
    List<LookupActor.CacheTiers> caches = new ArrayList<>();
    for (CacheDefinition d : node.definitions()) {
      if (node.byReference(d.cacheId())) {
        caches.add(new LookupActor.CacheTiers(d.cacheId(), hot.stats(d.cacheId()).snapshot()));
      }
    }
    return new LookupActor.TierReport(
        address,
        hot.budgetBytes(),
        hot.bytesHeld(),
        hot.peakBytesHeld(),
        hot.policy().name().toLowerCase(Locale.ROOT),
        caches.toArray(LookupActor.CacheTiers[]::new));
  }
}
