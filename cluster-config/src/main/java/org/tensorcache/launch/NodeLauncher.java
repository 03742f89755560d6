package org.tensorcache.launch;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.launch.tls.TransportSecurity;
import org.tensorcache.ops.Operations;

/** Builds a node's configuration from the profiles and starts TensorCache on it. */
public final class NodeLauncher {
  /** The name every node's ActorSystem has: members of one cluster must agree on it. */
  public static final String SYSTEM_NAME = "tensorcache";

  private NodeLauncher() {}

  /** A running node: its ActorSystem and the coordinator proxy. */
  public record Node(ActorSystem<Void> system, ActorRef<Coordinator.Command> coordinator) {}

  /**
   * The configuration of {@code profiles} (e.g. {@code local}, {@code cluster}, {@code h2}, {@code
   * postgres}, {@code aeron}, {@code tls}; earlier ones win), with {@code overrides} (HOCON paths)
   * on top and {@code tensorcache.data-dir} set to the absolute {@code dataDir}; JVM system
   * properties ({@code -Dkey=value} in {@code JAVA_OPTS}) sit between the overrides and the
   * profiles.
   */
  public static Config config(List<String> profiles, Map<String, Object> overrides, Path dataDir) {
    Map<String, Object> top = new HashMap<>(overrides);
    top.put("tensorcache.data-dir", dataDir.toAbsolutePath().normalize().toString());
    Config config = ConfigFactory.parseMap(top).withFallback(ConfigFactory.systemProperties());
    for (String profile : profiles) {
      String resource = "tensorcache/" + profile + ".conf";
      Config c = ConfigFactory.parseResources(resource);
      if (c.isEmpty()) {
        throw new IllegalArgumentException(
            "unknown profile '"
                + profile
                + "', expected local, cluster, h2, postgres, aeron or tls");
      }
      config = config.withFallback(c);
    }
    return config.withFallback(ConfigFactory.defaultReference()).resolve();
  }

  /**
   * Starts a node with {@code config}, registers {@code caches} and starts TensorCache on it, with
   * the health checks, metrics and status page its configuration asks for ({@link Operations});
   * first checks its transport security ({@link TransportSecurity}), so a TLS file that is missing
   * or wrong fails the start, naming the file, rather than every connection later.
   */
  public static Node start(Config config, List<CacheDefinition> caches) {
    TransportSecurity.check(config);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, config);
    try {
      TensorCacheNode node = TensorCacheNode.get(system);
      caches.forEach(node::register);
      ActorRef<Coordinator.Command> coordinator = TensorCache.start(system).coordinator();
      Operations.get(system).start(coordinator); // health, metrics and status page if configured
      return new Node(system, coordinator);
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
  }

  /**
   * The embedded default: one JVM with every role, a cluster of itself, the journal in H2 under
   * {@code dataDir}; returns once the node is Up.
   */
  public static Node startLocal(Path dataDir, List<CacheDefinition> caches, Duration within) {
    Node node = start(config(List.of("local"), Map.of(), dataDir), caches);
    CompletionStage<Void> up = whenUp(node.system());
    Cluster cluster = Cluster.get(node.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    try {
      up.toCompletableFuture().get(within.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      stop(node.system());
      throw new IllegalStateException("embedded node not Up within " + within, e);
    }
    return node;
  }

  /**
   * A member that only talks to the cluster (status, fill): it hosts no shards, sessions or
   * replicas, and the coordinator only if every other member is gone. Join it with {@code
   * pekko.cluster.seed-nodes} in {@code config}. Its transport is checked as a node's.
   */
  public static Node startClient(Config config) {
    TransportSecurity.check(config);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, config);
    try {
      return new Node(system, Coordinator.init(system));
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
  }

  /**
   * The overrides of a cluster member: its canonical {@code host} and {@code port}, the {@code
   * seeds} (as {@code host:port}; empty: the member seeds itself) and its {@code roles}.
   */
  public static Map<String, Object> clusterOverrides(
      String host, int port, List<String> seeds, List<String> roles) {
    List<String> seedNodes =
        (seeds.isEmpty() ? List.of(host + ":" + port) : seeds)
            .stream().map(s -> "pekko://" + SYSTEM_NAME + "@" + s).toList();
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("pekko.remote.artery.canonical.hostname", host);
    overrides.put("pekko.remote.artery.canonical.port", port);
    overrides.put("pekko.cluster.seed-nodes", seedNodes);
    overrides.put("pekko.cluster.roles", roles);
    return overrides;
  }

  /** Completes when the member of {@code system} is Up (at once if it already is). */
  public static CompletionStage<Void> whenUp(ActorSystem<?> system) {
    CompletableFuture<Void> up = new CompletableFuture<>();
    Cluster cluster = Cluster.get(system);
    system.systemActorOf(
        Behaviors.<SelfUp>setup(
            ctx -> {
              cluster.subscriptions().tell(Subscribe.create(ctx.getSelf(), SelfUp.class));
              return Behaviors.receiveMessage(
                  m -> {
                    up.complete(null);
                    return Behaviors.stopped();
                  });
            }),
        "tensorcache-await-up-" + UUID.randomUUID(),
        org.apache.pekko.actor.typed.Props.empty());
    return up;
  }

  /** Stops a node and waits for it (bounded). */
  public static void stop(ActorSystem<?> system) {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS).join();
  }
}
