package org.tensorcache.ops;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Locale;
import java.util.function.BiConsumer;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * The memory tiers of this node as Prometheus metrics: the hot tier's budget and bytes held, and
 * per cache replicated by reference its hits per tier, admissions, evictions and bytes held hot.
 */
final class TierCollectors {
  private TierCollectors() {}

  static void register(PrometheusRegistry registry, TensorCacheNode node) {
    HotTier hot = node.hotTier();
    GaugeWithCallback.builder()
        .name("tensorcache_hot_tier_budget_bytes")
        .help("The hot tier's budget: bytes of values held in memory for caches by reference.")
        .callback(cb -> cb.call(hot.budgetBytes()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tensorcache_hot_tier_held_bytes")
        .help("Bytes the hot tier holds now.")
        .callback(cb -> cb.call(hot.bytesHeld()))
        .register(registry);
    NodeCollectors.counter(
        registry,
        "tensorcache_tier_hits_total",
        "Values looked up, by the tier they were found in (hot, warm: a mapped segment, cold:"
            + " another node).",
        List.of("cache", "tier"),
        cb ->
            each(
                node,
                (id, s) -> {
                  for (Tier t : Tier.values()) {
                    cb.call(s.hits(t), id, t.name().toLowerCase(Locale.ROOT));
                  }
                }));
    NodeCollectors.counter(
        registry,
        "tensorcache_tier_admissions_total",
        "Blocks admitted to the hot tier.",
        List.of("cache"),
        cb -> each(node, (id, s) -> cb.call(s.admissions(), id)));
    NodeCollectors.counter(
        registry,
        "tensorcache_tier_evictions_total",
        "Ranges evicted from the hot tier.",
        List.of("cache"),
        cb -> each(node, (id, s) -> cb.call(s.evictions(), id)));
    GaugeWithCallback.builder()
        .name("tensorcache_tier_held_bytes")
        .help("Bytes of a cache's values held in the hot tier now.")
        .labelNames("cache")
        .callback(cb -> each(node, (id, s) -> cb.call(s.bytesHeld(), id)))
        .register(registry);
  }

  /** Every cache of the node replicated by reference (the others are not tiered). */
  private static void each(TensorCacheNode node, BiConsumer<String, TierStats.Snapshot> out) {
    for (CacheDefinition d : node.definitions()) {
      if (node.hotTier().holds(d.cacheId())) {
        out.accept(d.cacheId(), node.hotTier().stats(d.cacheId()).snapshot());
      }
    }
  }
}
