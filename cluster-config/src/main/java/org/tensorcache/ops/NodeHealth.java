package org.tensorcache.ops;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LookupEndpoint;

/**
 * What {@code /ready} and {@code /alive} report for this node. Ready: not shutting down, the lookup
 * port bound when one is configured, and the coordinator's restore of every registered cache's
 * segments at its start over (once seen, this node keeps it: a coordinator that moves restores
 * again, which does not make the served values any less there); membership (Up) is the check of
 * pekko-management-cluster-http; and object storage, when segments are kept there, answering. A
 * SIGTERM makes it not ready at once: a task in coordinated shutdown's first phase, before anything
 * unbinds or leaves. Alive: the actor system runs.
 */
public final class NodeHealth implements Extension {
  private static final Logger log = LoggerFactory.getLogger(NodeHealth.class);

  /** How long a readiness probe waits for the coordinator's status (under the check timeout). */
  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);

  private final ActorSystem<?> system;
  private final TensorCacheNode node;
  private final boolean endpointConfigured;
  private volatile ActorRef<Coordinator.Command> coordinator;
  private volatile boolean stopping;
  private volatile boolean restored;
  private volatile String lastUnreachable;

  private NodeHealth(ActorSystem<?> system) {
    this.system = system;
    this.node = TensorCacheNode.get(system);
    this.endpointConfigured =
        LookupEndpoint.Settings.create(system.settings().config()).port() >= 0;
  }

  /** The health of {@code system}'s node. */
  public static NodeHealth get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /**
   * Follows the node's coordinator (through {@code coordinator}, its proxy) for the restore, and
   * turns not ready when coordinated shutdown starts.
   */
  void watch(ActorRef<Coordinator.Command> coordinator) {
    this.coordinator = coordinator;
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeServiceUnbind(),
            "tensorcache-not-ready",
            () -> {
              stopping = true;
              log.info("shutting down: not ready any more");
              return CompletableFuture.completedFuture(Done.getInstance());
            });
  }

  /** Whether coordinated shutdown has started. */
  public boolean stopping() {
    return stopping;
  }

  /** Whether the actor system runs. */
  public boolean alive() {
    return !system.whenTerminated().isCompleted();
  }

  /**
   * Whether the node is ready to serve, as above; asks the coordinator until the restore is over.
   */
  public CompletionStage<Boolean> ready() {
    if (stopping || !alive() || (endpointConfigured && node.endpointAddress().isEmpty())) {
      return CompletableFuture.completedFuture(false);
    }
    if (ObjectStoreHealth.stores(node).isEmpty()) {
      return servingReady();
    }
    return ObjectStoreHealth.check(node, node.ioExecutor())
        .thenCompose(
            unreachable -> {
              if (unreachable.isPresent()) {
                if (!unreachable.get().equals(lastUnreachable)) {
                  log.warn("not ready: {}", unreachable.get());
                }
                lastUnreachable = unreachable.get();
                return CompletableFuture.completedFuture(false);
              }
              if (lastUnreachable != null) {
                log.info("object storage reachable again");
                lastUnreachable = null;
              }
              return servingReady();
            });
  }

  private CompletionStage<Boolean> servingReady() {
    if (restored) {
      return CompletableFuture.completedFuture(true);
    }
    ActorRef<Coordinator.Command> c = coordinator;
    if (c == null) {
      return CompletableFuture.completedFuture(false);
    }
    return AskPattern.<Coordinator.Command, Coordinator.Status>ask(
            c, Coordinator.GetStatus::new, ASK_TIMEOUT, system.scheduler())
        .handle(
            (status, failure) -> {
              if (failure != null) {
                log.debug("readiness: no status from the coordinator: {}", failure.toString());
                return false;
              }
              restored = restoredAll(status);
              return restored && !stopping;
            });
  }

  private boolean restoredAll(Coordinator.Status status) {
    for (CacheDefinition d : node.definitions()) {
      boolean done =
          Arrays.stream(status.caches())
              .anyMatch(c -> c.cacheId().equals(d.cacheId()) && c.restored());
      if (!done) {
        return false;
      }
    }
    return true;
  }

  private static final class Id extends ExtensionId<NodeHealth> {
    static final Id INSTANCE = new Id();

    @Override
    public NodeHealth createExtension(ActorSystem<?> system) {
      return new NodeHealth(system);
    }
  }
}
