package org.tensorcache.ops;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.LatencyHistogram;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.cache.TensorCacheNode;

/**
 * This node's own figures as Prometheus metrics, read from {@link NodeMetrics} and the hot tier at
 * each scrape: what its runners computed, what it persisted, its lookups and their latency, its
 * segment I/O, its lookup port and its memory tiers.
 */
final class NodeCollectors {
  private NodeCollectors() {}

  /** Registers the collectors of {@code node} with {@code registry}. */
  static void register(PrometheusRegistry registry, TensorCacheNode node) {
    NodeMetrics m = node.metrics();
    perCache(
        registry,
        node,
        "tensorcache_examples_computed_total",
        "Examples this node's runners computed.",
        NodeMetrics.CacheCounts::examplesComputed);
    perCache(
        registry,
        node,
        "tensorcache_examples_persisted_total",
        "Examples in the segments this node wrote (durable).",
        NodeMetrics.CacheCounts::examplesPersisted);
    perCache(
        registry,
        node,
        "tensorcache_ranges_completed_total",
        "Ranges that became complete in a shard on this node.",
        NodeMetrics.CacheCounts::rangesCompleted);
    perCache(
        registry,
        node,
        "tensorcache_ranges_persisted_total",
        "Range segments this node wrote (durable).",
        NodeMetrics.CacheCounts::rangesPersisted);
    perCache(
        registry,
        node,
        "tensorcache_segments_rejected_total",
        "Segment reads on this node that failed a check (truncated, corrupt, foreign);"
            + " the range is computed again.",
        NodeMetrics.CacheCounts::segmentsRejected);
    counter(
        registry,
        "tensorcache_lookups_total",
        "Lookups, answered or failed.",
        List.of("path"),
        cb -> {
          for (NodeMetrics.LookupPath p : NodeMetrics.LookupPath.values()) {
            cb.call(m.lookups(p), p.label());
          }
        });
    counter(
        registry,
        "tensorcache_lookup_failures_total",
        "Lookups that failed, by reason.",
        List.of("path", "reason"),
        cb -> {
          for (NodeMetrics.LookupPath p : NodeMetrics.LookupPath.values()) {
            for (NodeMetrics.FailureReason r : NodeMetrics.FailureReason.values()) {
              cb.call(m.lookupFailures(p, r), p.label(), r.label());
            }
          }
        });
    registry.register(
        histogram(
            "tensorcache_lookup_seconds",
            "Latency of lookups answered with values.",
            "path",
            m::lookupLatency));
    registry.register(
        histogram(
            "tensorcache_segment_write_seconds",
            "Latency of durable segment writes (temporary file, fsync, rename).",
            null,
            p -> m.segmentWriteLatency()));
    registry.register(
        histogram(
            "tensorcache_segment_read_seconds",
            "Latency of segment reads with their checks.",
            null,
            p -> m.segmentReadLatency()));
    GaugeWithCallback.builder()
        .name("tensorcache_port_connections")
        .help("Connections of the binary lookup port open now.")
        .callback(cb -> cb.call(m.portOpen()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tensorcache_port_requests_in_flight")
        .help("Requests of the binary lookup port read whole and not answered yet.")
        .callback(cb -> cb.call(m.portInFlight()))
        .register(registry);
    counter(
        registry,
        "tensorcache_port_accepted_total",
        "Connections the lookup port accepted.",
        List.of(),
        cb -> cb.call(m.portAcceptedTotal()));
    counter(
        registry,
        "tensorcache_port_refused_total",
        "Connections the lookup port refused: it served as many as it may.",
        List.of(),
        cb -> cb.call(m.portRefusedTotal()));
    counter(
        registry,
        "tensorcache_port_rejected_total",
        "Clients the lookup port turned away (TLS, token), by reason.",
        List.of("reason"),
        cb -> m.portRejected().forEach((reason, n) -> cb.call(n, reason)));
    GaugeWithCallback.builder()
        .name("tensorcache_object_storage_reachable")
        .help(
            "1 while the object storage segments are kept in answers, 0 while its last request"
                + " failed (no connection, a timeout, a 5xx reply) and none succeeded since.")
        .labelNames("bucket")
        .callback(
            cb ->
                ObjectStoreHealth.stores(node)
                    .forEach((s, bucket) -> cb.call(s.unreachable().isEmpty() ? 1 : 0, bucket)))
        .register(registry);
    counter(
        registry,
        "tensorcache_object_storage_failed_attempts_total",
        "Tries of object storage requests that failed and were tried again (or ended a request).",
        List.of("bucket"),
        cb -> ObjectStoreHealth.stores(node).forEach((s, b) -> cb.call(s.failedAttempts(), b)));
    TierCollectors.register(registry, node);
  }

  private static void perCache(
      PrometheusRegistry registry,
      TensorCacheNode node,
      String name,
      String help,
      java.util.function.ToLongFunction<NodeMetrics.CacheCounts> value) {
    counter(
        registry,
        name,
        help,
        List.of("cache"),
        cb -> {
          for (CacheDefinition d : node.definitions()) {
            cb.call(value.applyAsLong(node.metrics().cacheCounts(d.cacheId())), d.cacheId());
          }
        });
  }

  static void counter(
      PrometheusRegistry registry,
      String name,
      String help,
      List<String> labels,
      Consumer<CounterWithCallback.Callback> callback) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames(labels.toArray(String[]::new))
        .callback(callback)
        .register(registry);
  }

  /**
   * A histogram of {@link LatencyHistogram} snapshots: one series per {@link
   * NodeMetrics.LookupPath} when {@code label} is set, else one.
   */
  private static Collector histogram(
      String name,
      String help,
      String label,
      Function<NodeMetrics.LookupPath, LatencyHistogram.Snapshot> source) {
    return new Collector() {
      @Override
      public MetricSnapshot collect() {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(name).help(help);
        if (label == null) {
          b.dataPoint(point(source.apply(null), Labels.EMPTY));
        } else {
          for (NodeMetrics.LookupPath p : NodeMetrics.LookupPath.values()) {
            b.dataPoint(point(source.apply(p), Labels.of(label, p.label())));
          }
        }
        return b.build();
      }

      @Override
      public String getPrometheusName() {
        return name;
      }
    };
  }

  private static HistogramSnapshot.HistogramDataPointSnapshot point(
      LatencyHistogram.Snapshot s, Labels labels) {
    double[] bounds = Arrays.copyOf(s.bounds(), s.bounds().length + 1);
    bounds[bounds.length - 1] = Double.POSITIVE_INFINITY;
    return HistogramSnapshot.HistogramDataPointSnapshot.builder()
        .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, s.counts()))
        .sum(s.sumSeconds())
        .labels(labels)
        .build();
  }
}
