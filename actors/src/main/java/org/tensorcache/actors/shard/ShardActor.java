package org.tensorcache.actors.shard;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.Replication;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * Owns one range of one cache on a compute node (of a per-token cache: a {@link RowShard}):
 * computes its missing examples, requested ones first, and merges every micro-batch into the
 * replicated block as soon as it is done, so a crash loses at most the micro-batch in flight. The
 * unit of compute is a group the cache's planner makes from the range's rows alone: an example's
 * batch, and so its bits, never depend on requests, node or fail-over.
 */
public final class ShardActor {
  /** The sharded entity type; ids are {@code <cache id>#<range>}. */
  public static final EntityTypeKey<Command> ENTITY_KEY =
      EntityTypeKey.create(Command.class, "TensorCacheShard");

  /** What a shard receives. */
  public interface Command extends KryoSerializable {}

  /** Compute every missing example of the range (idempotent). */
  public enum Fill implements Command {
    INSTANCE
  }

  /** Compute these indices of the range first and reply with their values, in request order. */
  public record Compute(long[] indices, ActorRef<StatusReply<Computed>> replyTo)
      implements Command {}

  /** The values of {@link Compute#indices}: per field, {@code indices.length * width} of them. */
  public record Computed(long[] indices, Object[] values) implements KryoSerializable {}

  /** What a shard reports once it has written its range's segment itself (by reference). */
  public record RangeWritten(String cacheId, int range) implements KryoSerializable {}

  private interface Internal extends Command {}

  private record Loaded(Replicator.GetResponse<BlockData> response) implements Internal {}

  private record Changed(Replicator.SubscribeResponse<BlockData> response) implements Internal {}

  private record Updated(Replicator.UpdateResponse<BlockData> response) implements Internal {}

  private record SegmentChecked(Block block, Throwable failure) implements Internal {}

  private record SegmentWritten(Throwable failure) implements Internal {}

  private enum RetryWrite implements Internal {
    INSTANCE
  }

  private record PresenceUpdated(Replicator.UpdateResponse<PresenceData> response)
      implements Internal {}

  private record MicroBatchDone(int microBatch, RunnerOutput output, Throwable failure)
      implements Internal {}

  /**
   * Starts sharding of shard entities on the nodes with role {@code compute}; a shard that writes
   * its range's segment itself tells {@code reports}.
   */
  public static ActorRef<?> init(ActorSystem<?> system, ActorRef<RangeWritten> reports) {
    return ClusterSharding.get(system)
        .init(
            Entity.of(ENTITY_KEY, ctx -> create(ctx.getEntityId(), ctx.getShard(), reports))
                .withRole("compute"));
  }

  /** The entity id of {@code range} of {@code cacheId}. */
  public static String entityId(String cacheId, int range) {
    return RangeId.of(cacheId, range).toString();
  }

  static Behavior<Command> create(
      String entityId,
      ActorRef<ClusterSharding.ShardCommand> shard,
      ActorRef<RangeWritten> reports) {
    return Behaviors.setup(
        ctx -> {
          RangeId id = RangeId.parse(entityId);
          CacheDefinition cache = TensorCacheNode.get(ctx.getSystem()).definition(id.cacheId());
          if (cache.tokens() != null) {
            return RowShard.create(cache, id.range(), reports);
          }
          return Behaviors.withStash(
              10_000,
              stash ->
                  DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, BlockData> replicator) ->
                          new ShardActor(ctx, stash, replicator, entityId, shard, reports)
                              .loading()));
        });
  }

  private final ActorContext<Command> ctx;
  private final StashBuffer<Command> stash;
  private final TensorCacheNode node;
  private final CacheDefinition cache;
  private final int range;
  private final MicroBatchPipeline<Command> pipeline;
  private final ShardReplica<Command> replica;
  private final RangeValues values;
  private final ShardSegment<Command> segment;
  private final ActorRef<ClusterSharding.ShardCommand> shard;

  private ShardActor(
      ActorContext<Command> ctx,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, BlockData> replicator,
      String entityId,
      ActorRef<ClusterSharding.ShardCommand> shard,
      ActorRef<RangeWritten> reports) {
    this.ctx = ctx;
    // the parts below log through this context too: keep the actor's name on every line (what
    // fault-injection tests read, and the level operators set, is this class's logger)
    ctx.setLoggerName(ShardActor.class);
    this.shard = shard;
    this.stash = stash;
    this.node = TensorCacheNode.get(ctx.getSystem());
    RangeId id = RangeId.parse(entityId);
    this.cache = node.definition(id.cacheId());
    this.range = id.range();
    this.values = new RangeValues(Block.empty(cache.spec(), range));
    Block block = values.block();
    this.pipeline =
        new MicroBatchPipeline<>(
            ctx, node, cache, block.start(), block.length(), MicroBatchDone::new);
    Replication replication = node.replication(cache.cacheId());
    this.segment =
        new ShardSegment<>(
            ctx,
            cache,
            range,
            node,
            replication,
            SegmentWritten::new,
            RetryWrite.INSTANCE,
            reports);
    this.replica =
        new ShardReplica<>(
            ctx,
            replicator,
            cache.cacheId(),
            replication,
            node.settings().writeTimeout(),
            Updated::new,
            PresenceUpdated::new);
    replication.load(replicator, cache.cacheId(), range, ctx.getSelf(), Loaded::new, Changed::new);
  }

  /** Waits for the local replica's block before computing anything. */
  private Behavior<Command> loading() {
    return waitingFor(Loaded.class, this::onLoaded);
  }

  /** Stashes everything until a {@code type} message arrives. */
  private <T extends Command> Behavior<Command> waitingFor(
      Class<T> type, java.util.function.Function<T, Behavior<Command>> handler) {
    return Behaviors.receive(Command.class)
        .onMessage(type, handler::apply)
        .onAnyMessage(
            m -> {
              stash.stash(m);
              return Behaviors.same();
            })
        .build();
  }

  private Behavior<Command> onLoaded(Loaded loaded) {
    if (loaded.response() instanceof Replicator.GetSuccess<BlockData> ok) {
      values.merge(ok.dataValue().block());
    }
    if (values.isComplete()) {
      Behavior<Command> next = stash.unstashAll(running());
      releaseIfDone();
      return next;
    }
    // a range persisted before a cold start may not be back in the replicas yet: never compute
    // what a verified segment already holds
    segment.read(SegmentChecked::new);
    return waitingFor(SegmentChecked.class, this::onSegmentChecked);
  }

  private Behavior<Command> onSegmentChecked(SegmentChecked checked) {
    Block block = segment.verified(checked.block(), checked.failure());
    if (block != null) {
      values.merge(block);
      replica.publish(block);
    }
    return stash.unstashAll(running());
  }

  /** Computes what is asked, one planned group at a time on the compute dispatcher. */
  private Behavior<Command> running() {
    return Behaviors.receive(Command.class)
        .onMessageEquals(Fill.INSTANCE, this::onFill)
        .onMessage(Compute.class, this::onCompute)
        .onMessage(MicroBatchDone.class, this::onMicroBatchDone)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(Updated.class, this::onUpdated)
        .onMessage(PresenceUpdated.class, m -> answered(m.response()))
        .onMessage(SegmentWritten.class, this::onSegmentWritten)
        .onMessageEquals(RetryWrite.INSTANCE, this::retryWrite)
        .build();
  }

  private Behavior<Command> onFill() {
    segment.fillAsked();
    pipeline.plan().fill();
    pipeline.startNext(values.block());
    return Behaviors.same();
  }

  private Behavior<Command> onCompute(Compute compute) {
    String outside = pipeline.plan().outside(compute.indices(), values.block(), cache.cacheId());
    if (outside != null) {
      compute.replyTo().tell(StatusReply.error(outside));
      return Behaviors.same();
    }
    values.await(compute.indices(), compute.replyTo());
    pipeline.plan().request(compute.indices(), values.block());
    pipeline.startNext(values.block());
    return Behaviors.same();
  }

  private Behavior<Command> onMicroBatchDone(MicroBatchDone done) {
    Block part = pipeline.finished(done.microBatch(), done.output(), done.failure(), range);
    if (part == null) {
      values.fail(pipeline.plan(), done.microBatch(), MicroBatchPipeline.reason(done.failure()));
    } else {
      if (values.merge(part)) {
        node.metrics().rangeCompleted(cache.cacheId());
      }
      replica.publish(part);
      segment.writeIfComplete(values.block());
    }
    pipeline.startNext(values.block());
    return Behaviors.same();
  }

  private Behavior<Command> onSegmentWritten(SegmentWritten done) {
    segment.onWritten(done.failure());
    return Behaviors.same();
  }

  private Behavior<Command> retryWrite() {
    segment.writeIfComplete(values.block());
    return Behaviors.same();
  }

  private Behavior<Command> onChanged(Changed changed) {
    if (changed.response() instanceof Replicator.Changed<BlockData> c) {
      values.merge(c.dataValue().block());
    }
    return Behaviors.same();
  }

  private Behavior<Command> onUpdated(Updated updated) {
    return answered(updated.response());
  }

  private Behavior<Command> answered(Replicator.UpdateResponse<?> response) {
    replica.updated(ctx, response);
    releaseIfDone();
    return Behaviors.same();
  }

  /**
   * A complete range whose values are in the replicas needs nothing more from its shard: it stops
   * at once, freeing its copy of the values, rather than after the idle timeout (a request for the
   * range starts it again, from the replica). A shard that holds the only copy of the values stays
   * ({@link ShardReplica#mayStop}).
   */
  private void releaseIfDone() {
    if (values.isComplete() && pipeline.idle() && replica.mayStop() && values.nobodyWaits()) {
      shard.tell(new ClusterSharding.Passivate<>(ctx.getSelf()));
    }
  }
}
