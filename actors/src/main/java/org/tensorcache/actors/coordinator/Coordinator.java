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
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
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
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.BlockKey;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.PresenceKey;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.CacheProgress;
import org.tensorcache.actors.coordinator.CoordinatorState.Event;
import org.tensorcache.actors.coordinator.CoordinatorState.FillRequested;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The cluster singleton that drives fills, follows coverage, writes the segment of every complete
 * range and records it, and on start restores the persisted segments into the replicas, so that
 * only ranges never persisted are computed again.
 */
public final class Coordinator
    extends EventSourcedBehaviorWithEnforcedReplies<Coordinator.Command, Event, CoordinatorState> {
  /** What the coordinator receives. */
  public interface Command extends KryoSerializable {}

  /** Fill every range of a cache that is not persisted yet. */
  public record StartFill(String cacheId, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** A shard wrote the segment of its range itself (ranges replicated by reference). */
  public record RangeWritten(String cacheId, int range) implements Command {}

  /** Coverage and persistence of every registered cache. */
  public record GetStatus(ActorRef<Status> replyTo) implements Command {}

  /** The reply to {@link GetStatus}. */
  public record Status(CacheStatus[] caches) implements KryoSerializable {}

  private interface Internal extends Command {}

  private enum Tick implements Internal {
    INSTANCE
  }

  /**
   * A subscribed range changed, its block (values gossiped) or its presence (by reference). One
   * type for both: the replicator adapters register one function per reply class, so a second would
   * take the first one's replies too.
   */
  private record Changed(Replicator.SubscribeResponse<?> response) implements Internal {}

  private record SegmentWritten(int incarnation, String cacheId, int range, Throwable failure)
      implements Internal {}

  private record Restored(SegmentRestorer.Restored restored) implements Internal {}

  private record PresenceUpdated(Replicator.UpdateResponse<PresenceData> response)
      implements Internal {}

  private record ReplicaUpdated(Replicator.UpdateResponse<BlockData> response)
      implements Internal {}

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
   * The coordinator, restarted whole after a failure other than the journal's (a segment directory
   * or bucket that cannot be listed at start): a stopped singleton would leave the cluster without
   * a coordinator for good.
   */
  static Behavior<Command> supervised() {
    return Behaviors.supervise(create()).onFailure(Exception.class, backoff());
  }

  private static BackoffSupervisorStrategy backoff() {
    return SupervisorStrategy.restartWithBackoff(
        Duration.ofMillis(200), Duration.ofSeconds(5), 0.2);
  }

  static Behavior<Command> create() {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<Command, BlockData> replicator) ->
                            new Coordinator(
                                ctx,
                                timers,
                                replicator,
                                new ReplicatorMessageAdapter<>(
                                    ctx,
                                    DistributedData.get(ctx.getSystem()).replicator(),
                                    Duration.ofSeconds(5))))));
  }

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, BlockData> replicator;
  private final ReplicatorMessageAdapter<Command, PresenceData> presence;
  private final ReplicaWriter<Command> writer;
  private final TensorCacheNode node;
  private final ActorRef<SegmentRestorer.Restored> restoredAdapter;
  // made anew by each incarnation (see onRecovered); replies to an earlier one are ignored
  private int incarnation;
  private Coverage coverage;
  private SegmentWrites<Command> segments;
  private Restoration<Command> restoration;

  private Coordinator(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, BlockData> replicator,
      ReplicatorMessageAdapter<Command, PresenceData> presence) {
    // a journal write can fail (the database away, or an old singleton on a node being downed
    // that wrote the same sequence number first): restart and recover the journal. Such a restart
    // keeps this object but stops its children, so what each incarnation needs is made anew in
    // onRecovered.
    super(PersistenceId.ofUniqueId("tensorcache-coordinator"), backoff());
    this.ctx = ctx;
    ctx.setLoggerName(Coordinator.class); // its parts log through this context too
    this.timers = timers;
    this.replicator = replicator;
    this.presence = presence;
    this.writer =
        new ReplicaWriter<>(replicator, presence, ReplicaUpdated::new, PresenceUpdated::new);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.restoredAdapter = ctx.messageAdapter(SegmentRestorer.Restored.class, Restored::new);
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
        .onCommand(GetStatus.class, (state, cmd) -> Effect().reply(cmd.replyTo(), status(state)))
        .onCommand(Tick.class, this::onTick)
        .onCommand(Changed.class, this::onChanged)
        .onCommand(RangeWritten.class, this::onRangeWritten)
        .onCommand(PresenceUpdated.class, (state, cmd) -> Effect().none().thenNoReply())
        .onCommand(SegmentWritten.class, this::onSegmentWritten)
        .onCommand(Restored.class, this::onRestored)
        .onCommand(ReplicaUpdated.class, (state, cmd) -> Effect().none().thenNoReply())
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

  private void onRecovered(CoordinatorState state) {
    int current = ++incarnation;
    coverage = new Coverage();
    segments =
        new SegmentWrites<>(
            ctx, node, (cache, r, failure) -> new SegmentWritten(current, cache, r, failure));
    restoration = new Restoration<>(ctx, node, coverage, writer, current);
    for (CacheDefinition d : node.definitions()) {
      coverage.add(d);
      boolean byReference = node.byReference(d.cacheId());
      for (int r = 0; r < d.spec().rangeCount(); r++) {
        if (byReference) {
          presence.subscribe(PresenceKey.of(d.cacheId(), r), Changed::new);
        } else {
          replicator.subscribe(BlockKey.of(d.cacheId(), r), Changed::new);
        }
      }
      restoration.start(d, state.progress(d.cacheId()), restoredAdapter);
    }
    timers.startTimerWithFixedDelay(Tick.INSTANCE, node.settings().coordinatorTick());
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
        .thenRun(s -> ctx.getSelf().tell(Tick.INSTANCE))
        .thenReply(cmd.replyTo(), s -> StatusReply.ack());
  }

  private ReplyEffect<Event, CoordinatorState> onTick(CoordinatorState state, Tick tick) {
    ClusterSharding sharding = ClusterSharding.get(ctx.getSystem());
    for (CacheProgress p : state.caches()) {
      if (!coverage.knows(p.cacheId())) {
        continue; // a cache this node does not know: nothing to drive
      }
      boolean byReference = node.byReference(p.cacheId());
      for (int r = 0; r < coverage.ranges(p.cacheId()); r++) {
        boolean complete = coverage.complete(p.cacheId(), r);
        // by reference, only the shard holds the values: it writes the segment and says so
        if (p.filling() && !p.isPersisted(r) && (byReference || !complete)) {
          sharding
              .entityRefFor(ShardActor.ENTITY_KEY, RangeId.of(p.cacheId(), r).toString())
              .tell(ShardActor.Fill.INSTANCE);
        }
        if (!byReference && complete && !p.isPersisted(r)) {
          segments.write(p.cacheId(), coverage.block(p.cacheId(), r));
        }
      }
    }
    return Effect().none().thenNoReply();
  }

  private ReplyEffect<Event, CoordinatorState> onChanged(CoordinatorState state, Changed cmd) {
    if (cmd.response() instanceof Replicator.Changed<?> c) {
      if (c.dataValue() instanceof BlockData data) {
        RangeId id = BlockKey.rangeOf(c.key());
        Block block = data.block();
        coverage.block(id.cacheId(), block);
        if (block.isComplete() && !state.progress(id.cacheId()).isPersisted(id.range())) {
          segments.write(id.cacheId(), block);
        }
      } else if (c.dataValue() instanceof PresenceData data) {
        RangeId id = PresenceKey.rangeOf(c.key());
        coverage.presence(id.cacheId(), id.range(), data.count());
      }
    }
    return Effect().none().thenNoReply();
  }

  private ReplyEffect<Event, CoordinatorState> onRangeWritten(
      CoordinatorState state, RangeWritten cmd) {
    if (state.progress(cmd.cacheId()).isPersisted(cmd.range())) {
      return Effect().none().thenNoReply();
    }
    return Effect().persist(new RangePersisted(cmd.cacheId(), cmd.range())).thenNoReply();
  }

  private ReplyEffect<Event, CoordinatorState> onSegmentWritten(
      CoordinatorState state, SegmentWritten cmd) {
    if (cmd.incarnation() != incarnation) {
      return Effect().none().thenNoReply(); // the write is done again by this incarnation's ticks
    }
    Event event = segments.written(cmd.cacheId(), cmd.range(), cmd.failure());
    return event == null ? Effect().none().thenNoReply() : Effect().persist(event).thenNoReply();
  }

  private ReplyEffect<Event, CoordinatorState> onRestored(CoordinatorState state, Restored cmd) {
    Event event = restoration.restored(state, cmd.restored());
    return event == null ? Effect().none().thenNoReply() : Effect().persist(event).thenNoReply();
  }

  private Status status(CoordinatorState state) {
    return coverage.status(state, node.definitions());
  }
}
