package org.tensorcache.actors.coordinator;

import java.time.Duration;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.BlockKey;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.PresenceKey;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.Replication;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CoordinatorState.CacheProgress;
import org.tensorcache.actors.coordinator.CoordinatorState.Event;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.block.Block;

/**
 * The {@link Coordinator}'s child that drives fills: it follows every range in the replicas, asks
 * the shards of unfilled ranges to compute, writes the segment of every complete gossiped range,
 * restores the persisted segments as it starts, and tells the coordinator what to record. Nothing
 * of it is persisted: each instance (the first, or one restarted after a failure) asks the
 * coordinator for the manifest and builds everything else from it and the replicas.
 */
final class FillDriver extends AbstractBehavior<FillDriver.Command> {
  /** What the driver receives. */
  interface Command {}

  /**
   * The coordinator's manifest as it stands: its answer to {@link SendManifest}, and each change.
   */
  record Manifest(CoordinatorState state) implements Command {}

  /** Answer a status request with the coverage seen here beside the coordinator's manifest. */
  record Report(CoordinatorState state, ActorRef<Coordinator.Status> replyTo) implements Command {}

  /** What the driver asks of its coordinator. */
  interface ToCoordinator {}

  /** Record {@code event} in the manifest (unless it is there already). */
  record Record(Event event) implements ToCoordinator {}

  /** Send the manifest as it stands. */
  record SendManifest(ActorRef<Manifest> replyTo) implements ToCoordinator {}

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

  private record SegmentWritten(String cacheId, int range, Throwable failure) implements Internal {}

  private record Restored(SegmentRestorer.Restored restored) implements Internal {}

  private record PresenceUpdated(Replicator.UpdateResponse<PresenceData> response)
      implements Internal {}

  private record ReplicaUpdated(Replicator.UpdateResponse<BlockData> response)
      implements Internal {}

  /**
   * The driver, restarted with a backoff after a failure (segments that cannot be listed, a write
   * that fails for another reason than I/O): the new instance starts over from the manifest.
   */
  static Behavior<Command> supervised(ActorRef<ToCoordinator> coordinator) {
    return Behaviors.supervise(create(coordinator))
        .onFailure(
            Exception.class,
            SupervisorStrategy.restartWithBackoff(
                Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
  }

  static Behavior<Command> create(ActorRef<ToCoordinator> coordinator) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                1_000,
                stash ->
                    Behaviors.withTimers(
                        timers ->
                            DistributedData.withReplicatorMessageAdapter(
                                (ReplicatorMessageAdapter<Command, BlockData> blocks) ->
                                    new FillDriver(
                                        ctx,
                                        coordinator,
                                        stash,
                                        timers,
                                        blocks,
                                        new ReplicatorMessageAdapter<>(
                                            ctx,
                                            DistributedData.get(ctx.getSystem()).replicator(),
                                            Duration.ofSeconds(5)))))));
  }

  private final ActorRef<ToCoordinator> coordinator;
  private final StashBuffer<Command> stash;
  private final TimerScheduler<Command> timers;
  private final ReplicaWriter<Command> writer;
  private final TensorCacheNode node;
  private final Coverage coverage = new Coverage();
  private final SegmentWrites segments;
  private final Restoration restoration;
  // the coordinator's manifest as last heard: it is told of every change
  private CoordinatorState manifest;
  // replies of another restorer (that of this driver's previous instance) are not for this one
  private ActorRef<SegmentRestorer.Restore> restorer;

  private FillDriver(
      ActorContext<Command> ctx,
      ActorRef<ToCoordinator> coordinator,
      StashBuffer<Command> stash,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, BlockData> blocks,
      ReplicatorMessageAdapter<Command, PresenceData> presence) {
    super(ctx);
    ctx.setLoggerName(FillDriver.class); // its supervisor's restarts are logged under its name
    this.coordinator = coordinator;
    this.stash = stash;
    this.timers = timers;
    this.writer = new ReplicaWriter<>(blocks, presence, ReplicaUpdated::new, PresenceUpdated::new);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.segments = new SegmentWrites(node);
    this.restoration = new Restoration(node, coverage);
    coordinator.tell(new SendManifest(ctx.getSelf().narrow()));
  }

  /** The first state: waiting for the manifest, everything else kept for later. */
  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Manifest.class, this::onFirstManifest)
        .onAnyMessage(this::onEarly)
        .build();
  }

  private Behavior<Command> onEarly(Command cmd) {
    stash.stash(cmd);
    return this;
  }

  /** Subscribes to every range, starts the restore and the ticks, and drives from here on. */
  private Behavior<Command> onFirstManifest(Manifest m) {
    manifest = m.state();
    // listing and reading segments blocks: it runs on the I/O dispatcher, not the actor's thread
    restorer =
        getContext()
            .spawn(
                SegmentRestorer.create(node.ioExecutor(), node.metrics()),
                "segment-restorer",
                DispatcherSelector.fromConfig("tensorcache.io-dispatcher"));
    ActorRef<SegmentRestorer.Restored> replies =
        getContext().messageAdapter(SegmentRestorer.Restored.class, Restored::new);
    for (CacheDefinition d : node.definitions()) {
      coverage.add(d);
      for (int r = 0; r < d.spec().rangeCount(); r++) {
        node.replication(d.cacheId()).followProgress(writer, d.cacheId(), r, Changed::new);
      }
      restorer.tell(restoration.start(d, manifest.progress(d.cacheId()), replies));
    }
    timers.startTimerWithFixedDelay(Tick.INSTANCE, node.settings().coordinatorTick());
    return stash.unstashAll(driving());
  }

  /** The state once the manifest is known; its handlers stay in it ({@code this} is the first). */
  private Receive<Command> driving() {
    return newReceiveBuilder()
        .onMessage(Manifest.class, this::onManifest)
        .onMessage(Report.class, this::onReport)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(SegmentWritten.class, this::onSegmentWritten)
        .onMessage(Restored.class, this::onRestored)
        .onMessage(PresenceUpdated.class, u -> Behaviors.same())
        .onMessage(ReplicaUpdated.class, u -> Behaviors.same())
        .build();
  }

  /** A change of the manifest; a fill just asked for is driven at once. */
  private Behavior<Command> onManifest(Manifest m) {
    boolean newFill = false;
    for (CacheProgress p : m.state().caches()) {
      newFill |= p.filling() && !manifest.progress(p.cacheId()).filling();
    }
    manifest = m.state();
    return newFill ? onTick() : Behaviors.same();
  }

  private Behavior<Command> onReport(Report r) {
    r.replyTo().tell(coverage.status(r.state(), node.definitions()));
    return Behaviors.same();
  }

  private Behavior<Command> onTick() {
    ClusterSharding sharding = ClusterSharding.get(getContext().getSystem());
    for (CacheProgress p : manifest.caches()) {
      if (!coverage.knows(p.cacheId())) {
        continue; // a cache this node does not know: nothing to drive
      }
      Replication replication = node.replication(p.cacheId());
      for (int r = 0; r < coverage.ranges(p.cacheId()); r++) {
        boolean complete = coverage.complete(p.cacheId(), r);
        if (p.filling() && !p.isPersisted(r) && replication.driverAsksShard(complete)) {
          sharding
              .entityRefFor(ShardActor.ENTITY_KEY, RangeId.of(p.cacheId(), r).toString())
              .tell(ShardActor.Fill.INSTANCE);
        }
        if (replication.driverWritesSegment(complete) && !p.isPersisted(r)) {
          write(p.cacheId(), coverage.block(p.cacheId(), r));
        }
      }
    }
    return Behaviors.same();
  }

  private Behavior<Command> onChanged(Changed cmd) {
    if (cmd.response() instanceof Replicator.Changed<?> c) {
      if (c.dataValue() instanceof BlockData data) {
        RangeId id = BlockKey.rangeOf(c.key());
        Block block = data.block();
        coverage.block(id.cacheId(), block);
        if (block.isComplete() && !manifest.progress(id.cacheId()).isPersisted(id.range())) {
          write(id.cacheId(), block);
        }
      } else if (c.dataValue() instanceof PresenceData data) {
        RangeId id = PresenceKey.rangeOf(c.key());
        coverage.presence(id.cacheId(), id.range(), data.count());
      }
    }
    return Behaviors.same();
  }

  /** Writes the segment of a complete block on the I/O dispatcher, unless it is not due. */
  private void write(String cacheId, Block block) {
    if (segments.start(cacheId, block.range())) {
      getContext()
          .pipeToSelf(
              SegmentIo.write(node.definition(cacheId), block, node.ioExecutor(), node.metrics()),
              (ok, failure) -> new SegmentWritten(cacheId, block.range(), failure));
    }
  }

  private Behavior<Command> onSegmentWritten(SegmentWritten w) {
    // a write started by this driver's previous instance counts too: a durable segment is one
    Event event = segments.written(w.cacheId(), w.range(), w.failure());
    if (event != null) {
      coordinator.tell(new Record(event));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onRestored(Restored r) {
    if (!r.restored().from().equals(restorer)) {
      return Behaviors.same(); // read for an earlier instance: this one reads the segment again
    }
    Restoration.Outcome outcome = restoration.restored(manifest, r.restored());
    if (outcome.block() != null) {
      String cacheId = r.restored().cacheId();
      node.replication(cacheId).publish(writer, cacheId, outcome.block(), Replicator.writeLocal());
    }
    if (outcome.event() != null) {
      coordinator.tell(new Record(outcome.event()));
    }
    return Behaviors.same();
  }
}
