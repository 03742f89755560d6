package org.tensorcache.actors.coordinator;

import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.BackoffSupervisorStrategy;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.ClusterSingletonSettings;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.Event;
import org.tensorcache.actors.coordinator.CoordinatorState.FillRequested;
import org.tensorcache.actors.coordinator.CoordinatorState.RangeLost;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The cluster singleton that keeps the manifest of every cache: whether a fill was asked for and
 * which ranges have a persisted segment. It holds nothing else: the fill itself (ticks, replica
 * subscriptions, segment writes, the restore at start) is its child {@link FillDriver}, which it
 * spawns from the recovered manifest and which tells it what to record.
 */
public final class Coordinator
    extends EventSourcedBehaviorWithEnforcedReplies<Coordinator.Command, Event, CoordinatorState> {
  /** What the coordinator receives. */
  public interface Command extends KryoSerializable {}

  /** Fill every range of a cache that is not persisted yet. */
  public record StartFill(String cacheId, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** A shard's report that it wrote the segment of its range itself (by reference). */
  public record FromShard(ShardActor.RangeWritten written) implements Command {}

  /** Coverage and persistence of every registered cache. */
  public record GetStatus(ActorRef<Status> replyTo) implements Command {}

  /** The reply to {@link GetStatus}. */
  public record Status(CacheStatus[] caches) implements KryoSerializable {}

  private interface Internal extends Command {}

  /** A request of this coordinator's driver, adapted to its protocol. */
  private record FromDriver(FillDriver.ToCoordinator request) implements Internal {}

  /**
   * Starts (or joins) the coordinator singleton and returns its proxy. It runs on the oldest node
   * with role {@code compute}: a member without that role may know no cache at all.
   */
  public static ActorRef<Command> init(ActorSystem<?> system) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(supervised(), "tensorcache-coordinator")
                .withSettings(ClusterSingletonSettings.create(system).withRole("compute")));
  }

  /**
   * The coordinator, restarted whole after a failure other than the journal's: a stopped singleton
   * would leave the cluster without a coordinator for good.
   */
  static Behavior<Command> supervised() {
    return Behaviors.supervise(create()).onFailure(Exception.class, backoff());
  }

  private static BackoffSupervisorStrategy backoff() {
    return SupervisorStrategy.restartWithBackoff(
        Duration.ofMillis(200), Duration.ofSeconds(5), 0.2);
  }

  static Behavior<Command> create() {
    return Behaviors.setup(Coordinator::new);
  }

  private final ActorContext<Command> ctx;
  private final TensorCacheNode node;
  // spawned anew after each recovery: a restart stops the children
  private ActorRef<FillDriver.Command> driver;

  private Coordinator(ActorContext<Command> ctx) {
    // a journal write can fail (the database away, or an old singleton on a node being downed
    // that wrote the same sequence number first): restart and recover the journal. Such a restart
    // stops the driver with the other children; the recovery spawns a fresh one.
    super(PersistenceId.ofUniqueId("tensorcache-coordinator"), backoff());
    this.ctx = ctx;
    this.node = TensorCacheNode.get(ctx.getSystem());
  }

  @Override
  public CoordinatorState emptyState() {
    return CoordinatorState.empty();
  }

  @Override
  public CommandHandlerWithReply<Command, Event, CoordinatorState> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(StartFill.class, this::onStartFill)
        .onCommand(GetStatus.class, this::onGetStatus)
        .onCommand(
            FromShard.class,
            (s, c) -> record(s, new RangePersisted(c.written().cacheId(), c.written().range())))
        .onCommand(FromDriver.class, this::onFromDriver)
        .build();
  }

  @Override
  public EventHandler<CoordinatorState, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(CoordinatorState::apply);
  }

  @Override
  public SignalHandler<CoordinatorState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecovered)
        .build();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(node.settings().snapshotEvery(), 2);
  }

  /** Spawns the driver of this recovery; it asks for the manifest as it starts. */
  private void onRecovered(CoordinatorState state) {
    ActorRef<FillDriver.ToCoordinator> requests =
        ctx.messageAdapter(FillDriver.ToCoordinator.class, FromDriver::new);
    driver = ctx.spawn(FillDriver.supervised(requests), "fill-driver");
  }

  private ReplyEffect<Event, CoordinatorState> onStartFill(CoordinatorState state, StartFill cmd) {
    try {
      node.definition(cmd.cacheId());
    } catch (IllegalArgumentException e) {
      return Effect().reply(cmd.replyTo(), StatusReply.error(e.getMessage()));
    }
    if (state.progress(cmd.cacheId()).filling()) {
      return Effect().reply(cmd.replyTo(), StatusReply.ack());
    }
    return Effect()
        .persist(new FillRequested(cmd.cacheId()))
        .thenRun(this::tellDriver)
        .thenReply(cmd.replyTo(), s -> StatusReply.ack());
  }

  /** The driver answers: it knows the coverage, and is given the manifest to report beside it. */
  private ReplyEffect<Event, CoordinatorState> onGetStatus(CoordinatorState state, GetStatus cmd) {
    driver.tell(new FillDriver.Report(state, cmd.replyTo()));
    return Effect().none().thenNoReply();
  }

  private ReplyEffect<Event, CoordinatorState> onFromDriver(
      CoordinatorState state, FromDriver cmd) {
    if (cmd.request() instanceof FillDriver.Record r) {
      return record(state, r.event());
    }
    if (cmd.request() instanceof FillDriver.SendManifest m) {
      return Effect().reply(m.replyTo(), new FillDriver.Manifest(state));
    }
    throw new IllegalArgumentException("unknown request of the driver " + cmd.request());
  }

  /**
   * Persists {@code event} unless the manifest has it already (a range recorded twice: a driver
   * that restarted wrote it again, or a shard reported it again), then gives the driver the new
   * manifest.
   */
  private ReplyEffect<Event, CoordinatorState> record(CoordinatorState state, Event event) {
    if (!changes(state, event)) {
      return Effect().none().thenNoReply();
    }
    return Effect().persist(event).thenRun(this::tellDriver).thenNoReply();
  }

  private static boolean changes(CoordinatorState state, Event event) {
    if (event instanceof RangePersisted p) {
      return !state.progress(p.cacheId()).isPersisted(p.range());
    }
    if (event instanceof RangeLost l) {
      return state.progress(l.cacheId()).isPersisted(l.range());
    }
    return !(event instanceof FillRequested f) || !state.progress(f.cacheId()).filling();
  }

  private void tellDriver(CoordinatorState state) {
    driver.tell(new FillDriver.Manifest(state));
  }
}
