package org.tensorcache.actors;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.coordinator.ShardReports;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.lookup.LookupEndpoint;
import org.tensorcache.actors.replica.ReplicaPublisher;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.journal.JournalSchema;

/**
 * Starts TensorCache on a node: the one place that wires the actor packages together, so that each
 * of them only knows the packages below it.
 */
public final class TensorCache {
  private TensorCache() {}

  /** What a started node hands to the code that runs it. */
  public record Handles(
      ActorRef<Coordinator.Command> coordinator,
      ActorRef<LookupActor.Command> lookup,
      Optional<InetSocketAddress> lookupPort) {}

  /**
   * Starts this node's part of TensorCache once its caches are registered with {@link
   * TensorCacheNode#register}: the journal tables, shard and session sharding, the replica
   * publisher, the tier reporter, the lookup actor (and the binary lookup port when configured) and
   * the coordinator singleton.
   */
  public static Handles start(ActorSystem<?> system) {
    JournalSchema.ensure(system);
    ActorRef<Coordinator.Command> coordinator = Coordinator.init(system);
    ShardActor.init(system, ShardReports.start(system, coordinator));
    TrainerSession.init(system);
    system.systemActorOf(ReplicaPublisher.create(), "tensorcache-replica", Props.empty());
    ActorRef<TierReporter.Command> tiers =
        system.systemActorOf(TierReporter.create(), TierReporter.NAME, Props.empty());
    system.receptionist().tell(Receptionist.register(TierReporter.SERVICE_KEY, tiers));
    // served from this node's replica to processes that hold none
    LocalLookup local = LocalLookup.get(system);
    system.receptionist().tell(Receptionist.register(LookupActor.SERVICE_KEY, local.actor()));
    Optional<InetSocketAddress> port = startEndpoint(system, local);
    port.ifPresent(TensorCacheNode.get(system)::lookupPortBound);
    return new Handles(coordinator, local.actor(), port);
  }

  /** Binds the binary lookup port when it is configured; it closes as the node shuts down. */
  private static Optional<InetSocketAddress> startEndpoint(
      ActorSystem<?> system, LocalLookup local) {
    LookupEndpoint.Settings s = LookupEndpoint.Settings.create(system.settings().config());
    if (s.port() < 0) {
      return Optional.empty();
    }
    LookupEndpoint endpoint;
    try {
      endpoint = LookupEndpoint.start(local, s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseServiceUnbind(),
            "tensorcache-lookup-endpoint",
            () -> {
              endpoint.close();
              return CompletableFuture.completedFuture(Done.getInstance());
            });
    system.getWhenTerminated().thenRun(endpoint::close);
    return Optional.of(endpoint.address());
  }
}
