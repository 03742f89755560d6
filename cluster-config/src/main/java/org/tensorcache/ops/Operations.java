package org.tensorcache.ops;

import com.typesafe.config.Config;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;

/**
 * Starts what a node serves to operators, each when configured: {@code /alive} and {@code /ready}
 * through Pekko Management ({@code pekko.management.http.port}, -1 off), and on {@code
 * tensorcache.metrics.port} (-1 off) Prometheus metrics at {@code /metrics}, the status page at
 * {@code /} and its data at {@code /status.json}. Either port may be 0: any free port; the bound
 * addresses are here once started.
 */
public final class Operations implements Extension {
  private static final Logger log = LoggerFactory.getLogger(Operations.class);
  private static final Duration BIND_TIMEOUT = Duration.ofSeconds(30);

  private final ActorSystem<?> system;
  private volatile InetSocketAddress management;
  private volatile InetSocketAddress metrics;

  private Operations(ActorSystem<?> system) {
    this.system = system;
  }

  /** The operations endpoints of {@code system}'s node. */
  public static Operations get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /**
   * Starts the configured endpoints of a node whose TensorCache runs; {@code coordinator} is its
   * proxy. Returns once they are bound; a port that cannot be bound is an error.
   */
  public void start(ActorRef<Coordinator.Command> coordinator) {
    Config config = system.settings().config();
    NodeHealth.get(system).watch(coordinator);
    if (config.getInt("pekko.management.http.port") >= 0) {
      management = startManagement();
    }
    Config m = config.getConfig("tensorcache.metrics");
    int port = m.getInt("port");
    if (port >= 0) {
      if (port > 65535) {
        throw new IllegalArgumentException(
            "tensorcache.metrics.port " + port + ", expected -1 (off), 0 (any) or up to 65535");
      }
      String host = m.getString("host");
      if (host.isEmpty()) {
        host = config.getString("pekko.remote.artery.canonical.hostname");
      }
      ClusterView view =
          new ClusterView(
              system, coordinator, m.getDuration("poll-interval"), m.getDuration("rate-window"));
      view.start();
      metrics = startMetrics(host, port, view);
    }
  }

  /** Where {@code /alive} and {@code /ready} are served, when they are. */
  public Optional<InetSocketAddress> managementAddress() {
    return Optional.ofNullable(management);
  }

  /** Where the metrics, the status page and its data are served, when they are. */
  public Optional<InetSocketAddress> metricsAddress() {
    return Optional.ofNullable(metrics);
  }

  private InetSocketAddress startManagement() {
    Uri uri;
    try {
      uri =
          PekkoManagement.get(Adapter.toClassic(system))
              .start()
              .toCompletableFuture()
              .get(BIND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot serve /alive and /ready on pekko.management.http.port "
              + system.settings().config().getInt("pekko.management.http.port"),
          e);
    }
    return new InetSocketAddress(uri.host().address(), uri.port());
  }

  private InetSocketAddress startMetrics(String host, int port, ClusterView view) {
    PrometheusRegistry registry = new PrometheusRegistry();
    JvmMetrics.builder().register(registry);
    NodeCollectors.register(registry, TensorCacheNode.get(system));
    ClusterCollectors.register(registry, system, view);
    HTTPServer server;
    try {
      server =
          HTTPServer.builder()
              .hostname(host)
              .port(port)
              .registry(registry)
              .defaultHandler(new StatusPage(new StatusJson(system, view)))
              .buildAndStart();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot serve metrics on tensorcache.metrics " + host + ":" + port, e);
    }
    // it stays up while the node leaves, so that the leaving shows; it closes with the node
    system.getWhenTerminated().thenRun(server::close);
    InetSocketAddress address = new InetSocketAddress(host, server.getPort());
    log.info("metrics and status page on http://{}:{}/", host, server.getPort());
    return address;
  }

  private static final class Id extends ExtensionId<Operations> {
    static final Id INSTANCE = new Id();

    @Override
    public Operations createExtension(ActorSystem<?> system) {
      return new Operations(system);
    }
  }
}
