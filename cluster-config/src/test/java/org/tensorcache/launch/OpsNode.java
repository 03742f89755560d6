package org.tensorcache.launch;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.ops.Operations;

/**
 * One node in this JVM, a cluster of itself with every role, serving its lookup port, its metrics
 * and status page and its health checks on free ports; and an HTTP client to read them.
 */
final class OpsNode implements AutoCloseable {
  final NodeLauncher.Node node;
  final InetSocketAddress metrics;
  final InetSocketAddress management;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A node of {@code cache} with {@code settings} on top of those above. */
  OpsNode(Path dir, CacheDefinition cache, Map<String, Object> settings) throws Exception {
    Map<String, Object> overrides =
        new HashMap<>(
            NodeLauncher.clusterOverrides(
                "127.0.0.1", 0, List.of(), List.of("compute", "lookup", "trainer")));
    overrides.put("pekko.cluster.seed-nodes", List.of());
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.put("pekko.loglevel", "WARNING");
    overrides.put("tensorcache.lookup.endpoint.port", 0);
    overrides.put("tensorcache.metrics.port", 0);
    overrides.put("tensorcache.metrics.poll-interval", "200ms");
    overrides.put("pekko.management.http.port", 0);
    overrides.put("pekko.management.http.hostname", "127.0.0.1");
    overrides.putAll(settings);
    node =
        NodeLauncher.start(
            NodeLauncher.config(List.of("cluster", "h2"), overrides, dir), List.of(cache));
    Cluster cluster = Cluster.get(node.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    NodeLauncher.whenUp(node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS);
    metrics = Operations.get(node.system()).metricsAddress().orElseThrow();
    management = Operations.get(node.system()).managementAddress().orElseThrow();
  }

  /** Asks the coordinator to fill {@code cacheId}; completes once every range is persisted. */
  CompletableFuture<CacheStatus> fill(String cacheId) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return ClusterFill.run(node.system(), node.coordinator(), cacheId, false);
          } catch (Exception e) {
            throw new IllegalStateException("fill of " + cacheId + " failed", e);
          }
        });
  }

  /** The coordinator's view of {@code cacheId}. */
  CacheStatus status(String cacheId) throws Exception {
    return ClusterFill.status(node.system(), node.coordinator(), cacheId);
  }

  /** The response to a GET of {@code path} on {@code address}. */
  HttpResponse<String> get(InetSocketAddress address, String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + address.getPort() + path);
    return http.send(
        HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The base URL of the metrics port. */
  String metricsUrl() {
    return "http://127.0.0.1:" + metrics.getPort() + "/";
  }

  @Override
  public void close() {
    NodeLauncher.stop(node.system());
  }
}
