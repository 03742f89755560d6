package org.tensorcache.ops;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * The cluster as this node sees it, as Prometheus gauges: members by status, and per cache the
 * coverage the coordinator last reported (ranges by state, examples present), the fill rate, the
 * time to completion and the replication lag. Every node exports the same coverage: take one.
 */
final class ClusterCollectors {
  /** Range states in the order of {@link CacheStatus#MISSING} and the rest. */
  static final String[] STATES = {"missing", "computing", "complete", "persisted", "rejected"};

  private ClusterCollectors() {}

  static void register(PrometheusRegistry registry, ActorSystem<?> system, ClusterView view) {
    GaugeWithCallback.builder()
        .name("tensorcache_members")
        .help("Cluster members as this node sees them, by status.")
        .labelNames("status")
        .callback(cb -> membersByStatus(system).forEach((status, n) -> cb.call(n, status)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tensorcache_members_unreachable")
        .help("Members this node's failure detector finds unreachable.")
        .callback(cb -> cb.call(Cluster.get(system).state().getUnreachable().size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tensorcache_ranges")
        .help(
            "Ranges by state, as the coordinator last reported: missing, computing (some examples"
                + " present), complete (all present, segment not recorded yet), persisted,"
                + " rejected (segment failed its checks, not complete again yet).")
        .labelNames("cache", "state")
        .callback(
            cb -> {
              for (ClusterView.CacheView c : view.snapshot().caches()) {
                for (byte s = 0; s < STATES.length; s++) {
                  cb.call(c.status().rangesIn(s), c.status().cacheId(), STATES[s]);
                }
              }
            })
        .register(registry);
    perCache(
        registry,
        view,
        "tensorcache_examples",
        "Examples of the cache.",
        c -> c.status().examples());
    perCache(
        registry,
        view,
        "tensorcache_examples_present",
        "Examples present in the replicas, as the coordinator last reported.",
        c -> c.status().present());
    perCache(
        registry,
        view,
        "tensorcache_fill_examples_per_second",
        "Examples becoming present per second, over the last rate window.",
        ClusterView.CacheView::examplesPerSecond);
    perCache(
        registry,
        view,
        "tensorcache_fill_eta_seconds",
        "Seconds until every example is present at the current fill rate (+Inf: not filling).",
        ClusterView.CacheView::etaSeconds);
    perCache(
        registry,
        view,
        "tensorcache_replication_lag_seconds",
        "How long the oldest range complete in the replicas has waited for its segment to be"
            + " recorded persisted (0: none waits).",
        c -> c.status().unpersistedMillis() / 1000.0);
    GaugeWithCallback.builder()
        .name("tensorcache_status_age_seconds")
        .help("Seconds since the coordinator last answered this node (+Inf: never).")
        .callback(cb -> cb.call(view.snapshot().ageSeconds()))
        .register(registry);
  }

  private static void perCache(
      PrometheusRegistry registry,
      ClusterView view,
      String name,
      String help,
      ToDoubleFunction<ClusterView.CacheView> value) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames("cache")
        .callback(
            cb -> {
              for (ClusterView.CacheView c : view.snapshot().caches()) {
                cb.call(value.applyAsDouble(c), c.status().cacheId());
              }
            })
        .register(registry);
  }

  /** Members per status name in lower case ({@code up}, {@code leaving}, ...). */
  static Map<String, Integer> membersByStatus(ActorSystem<?> system) {
    Map<String, Integer> out = new TreeMap<>();
    for (Member m : Cluster.get(system).state().getMembers()) {
      out.merge(m.status().toString().toLowerCase(Locale.ROOT), 1, Integer::sum);
    }
    return out;
  }
}
