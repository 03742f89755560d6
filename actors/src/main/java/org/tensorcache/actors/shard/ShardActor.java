package org.tensorcache.actors.shard;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
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
import org.tensorcache.actors.cache.BlockKey;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * Owns one range of one cache on a compute node: computes its missing examples, requested ones
 * first, and merges every micro-batch into the replicated block as soon as it is done, so a crash
 * loses at most the micro-batch in flight.
 *
 * <p>The unit of compute is an aligned micro-batch of the range, whatever was asked for: the batch
 * an example is computed in, and so its bits, never depend on the requests, the node or a
 * fail-over.
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

  /** The values of {@link Compute#indices}: per field, {@code indices.length * width} floats. */
  public record Computed(long[] indices, float[][] values) implements KryoSerializable {}

  private static final int PIPELINE = 2;

  private interface Internal extends Command {}

  private record Loaded(Replicator.GetResponse<BlockData> response) implements Internal {}

  private record Changed(Replicator.SubscribeResponse<BlockData> response) implements Internal {}

  private record Updated(Replicator.UpdateResponse<BlockData> response) implements Internal {}

  private record SegmentChecked(Block block, Throwable failure) implements Internal {}

  private record SegmentWritten(Throwable failure) implements Internal {}

  private record PresenceUpdated(Replicator.UpdateResponse<PresenceData> response)
      implements Internal {}

  private record GroupDone(int group, RunnerOutput output, Throwable failure) implements Internal {}

  /** Starts sharding of shard entities on the nodes with role {@code compute}. */
  public static ActorRef<?> init(ActorSystem<?> system) {
    return ClusterSharding.get(system)
        .init(
            Entity.of(ENTITY_KEY, ctx -> create(ctx.getEntityId(), ctx.getShard()))
                .withRole("compute"));
  }

  /** The entity id of {@code range} of {@code cacheId}. */
  public static String entityId(String cacheId, int range) {
    return cacheId + "#" + range;
  }

  static Behavior<Command> create(String entityId, ActorRef<ClusterSharding.ShardCommand> shard) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                10_000,
                stash ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<Command, BlockData> replicator) ->
                            new ShardActor(ctx, stash, replicator, entityId, shard).loading())));
  }

  private final ActorContext<Command> ctx;
  private final StashBuffer<Command> stash;
  private final ReplicatorMessageAdapter<Command, BlockData> replicator;
  private final TensorCacheNode node;
  private final CacheDefinition cache;
  private final BlockKey key;
  private final int range;
  private final GroupPlan plan;
  private final Waiters waiters = new Waiters();
  private final boolean byReference;
  private final ReplicaWriter<Command> writer;
  private Block current;
  private final java.util.Set<Integer> inFlight = new java.util.HashSet<>();
  private boolean writing;
  private boolean written;
  private final ActorRef<ClusterSharding.ShardCommand> shard;
  private int updating;

  private ShardActor(
      ActorContext<Command> ctx,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, BlockData> replicator,
      String entityId,
      ActorRef<ClusterSharding.ShardCommand> shard) {
    this.ctx = ctx;
    this.shard = shard;
    this.stash = stash;
    this.replicator = replicator;
    this.node = TensorCacheNode.get(ctx.getSystem());
    int hash = entityId.lastIndexOf('#');
    this.cache = node.definition(entityId.substring(0, hash));
    this.range = Integer.parseInt(entityId.substring(hash + 1));
    this.key = BlockKey.of(cache.cacheId(), range);
    this.current = Block.empty(cache.spec(), range);
    this.plan = new GroupPlan(current.length(), cache.microBatch());
    this.byReference = node.byReference(cache.cacheId());
    this.writer =
        new ReplicaWriter<>(
            replicator,
            new ReplicatorMessageAdapter<>(
                ctx, DistributedData.get(ctx.getSystem()).replicator(), Duration.ofSeconds(5)),
            Updated::new,
            PresenceUpdated::new);
    if (byReference) {
      ctx.getSelf().tell(new Loaded(null)); // no values in the replicas: only the segment has them
    } else {
      replicator.askGet(r -> new Replicator.Get<>(key, Replicator.readLocal(), r), Loaded::new);
      replicator.subscribe(key, Changed::new);
    }
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
      current.mergeInPlace(ok.dataValue().block());
    }
    if (current.isComplete()) {
      Behavior<Command> next = stash.unstashAll(running());
      releaseIfDone();
      return next;
    }
    // a range persisted before a cold start may not be back in the replicas yet: never compute
    // what a verified segment already holds
    ctx.pipeToSelf(SegmentIo.read(cache, range, node.ioExecutor()), SegmentChecked::new);
    return waitingFor(SegmentChecked.class, this::onSegmentChecked);
  }

  private Behavior<Command> onSegmentChecked(SegmentChecked checked) {
    if (checked.failure() != null) {
      ctx.getLog()
          .warn(
              "segment of range {} of {} not used: {}",
              range,
              cache.cacheId(),
              checked.failure().getMessage());
    } else if (checked.block() != null) {
      Block block = checked.block();
      current.mergeInPlace(block);
      written = block.isComplete();
      publish(block);
    }
    return stash.unstashAll(running());
  }

  /** Makes a part of the range known: its values by gossip, or only its presence by reference. */
  private void publish(Block part) {
    if (!byReference) {
      updating++;
    }
    writer.write(
        cache.cacheId(),
        part,
        byReference,
        new Replicator.WriteMajority(node.settings().writeTimeout()));
  }

  /** Computes what is asked, one aligned micro-batch at a time on the compute dispatcher. */
  private Behavior<Command> running() {
    return Behaviors.receive(Command.class)
        .onMessageEquals(Fill.INSTANCE, this::onFill)
        .onMessage(Compute.class, this::onCompute)
        .onMessage(GroupDone.class, this::onGroupDone)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(Updated.class, this::onUpdated)
        .onMessage(PresenceUpdated.class, m -> Behaviors.same())
        .onMessage(SegmentWritten.class, this::onSegmentWritten)
        .build();
  }

  private Behavior<Command> onFill() {
    if (written) {
      reportWritten(); // the coordinator may have missed it
    }
    plan.fill();
    startNext();
    return Behaviors.same();
  }

  private Behavior<Command> onCompute(Compute compute) {
    String outside = plan.outside(compute.indices(), current, cache.cacheId());
    if (outside != null) {
      compute.replyTo().tell(StatusReply.error(outside));
      return Behaviors.same();
    }
    waiters.add(compute.indices(), compute.replyTo());
    plan.request(compute.indices(), current);
    waiters.answer(current);
    startNext();
    return Behaviors.same();
  }

  /**
   * Keeps up to {@link #PIPELINE} micro-batches queued on the compute dispatcher, so that the
   * device never waits while this actor merges and replicates the previous result.
   */
  private void startNext() {
    while (inFlight.size() < PIPELINE) {
      int group = plan.next(current, inFlight::contains);
      if (group < 0) {
        return;
      }
      inFlight.add(group);
      var examples = cache.data().slice(plan.from(group, current), plan.to(group, current));
      String cacheId = cache.cacheId();
      CompletableFuture<RunnerOutput> work =
          CompletableFuture.supplyAsync(
              () -> node.compute(cacheId, examples), node.computeExecutor());
      ctx.pipeToSelf(work, (out, failure) -> new GroupDone(group, out, failure));
    }
  }

  private Behavior<Command> onGroupDone(GroupDone done) {
    inFlight.remove(done.group());
    if (done.failure() != null) {
      Throwable cause =
          done.failure().getCause() != null ? done.failure().getCause() : done.failure();
      ctx.getLog()
          .error(
              "range {} of {}: micro-batch {} failed: {}",
              range,
              cache.cacheId(),
              done.group(),
              cause.getMessage());
      plan.failed(done.group());
      waiters.fail(plan, done.group(), current, cause.getMessage());
    } else {
      Block part = Block.empty(cache.spec(), range);
      RunnerOutput out = done.output();
      for (int row = 0; row < out.size(); row++) {
        part.put(out.index(row), out.row(row));
      }
      current.mergeInPlace(part);
      node.addComputed(out.size());
      // one line per micro-batch, at DEBUG: what fault-injection tests count to prove that no
      // persisted work is computed again
      ctx.getLog()
          .debug(
              "computed range {} group {} ({} examples) of {}",
              range,
              done.group(),
              out.size(),
              cache.cacheId());
      publish(part);
      writeIfComplete();
      waiters.answer(current);
    }
    startNext();
    return Behaviors.same();
  }

  /** By reference, the shard holds the only copy of the values: it writes the segment itself. */
  private void writeIfComplete() {
    if (!byReference || !current.isComplete() || writing || written) {
      return;
    }
    writing = true;
    ctx.pipeToSelf(
        SegmentIo.write(cache, current.copy(), node.ioExecutor()),
        (ok, failure) -> new SegmentWritten(failure));
  }

  private Behavior<Command> onSegmentWritten(SegmentWritten done) {
    writing = false;
    if (done.failure() != null) {
      ctx.getLog()
          .error(
              "segment of range {} of {} not written: {}",
              range,
              cache.cacheId(),
              done.failure().toString());
      return Behaviors.same();
    }
    written = true;
    reportWritten();
    return Behaviors.same();
  }

  private void reportWritten() {
    Coordinator.init(ctx.getSystem()).tell(new Coordinator.RangeWritten(cache.cacheId(), range));
  }

  private Behavior<Command> onChanged(Changed changed) {
    if (changed.response() instanceof Replicator.Changed<BlockData> c) {
      current.mergeInPlace(c.dataValue().block());
      waiters.answer(current);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onUpdated(Updated updated) {
    if (!(updated.response() instanceof Replicator.UpdateSuccess<BlockData>)) {
      // the local replica has the values and gossip spreads them; only the extra copies timed out
      ctx.getLog().debug("range {} of {}: {}", range, cache.cacheId(), updated.response());
    }
    updating--;
    releaseIfDone();
    return Behaviors.same();
  }

  /**
   * A complete range whose values are in the replicas needs nothing more from its shard: it stops
   * at once, freeing its copy of the values, rather than after the idle timeout (a request for the
   * range starts it again, from the replica). By reference the shard's copy is the one that lookups
   * read, so it stays.
   */
  private void releaseIfDone() {
    if (!byReference
        && current.isComplete()
        && inFlight.isEmpty()
        && updating == 0
        && waiters.isEmpty()) {
      shard.tell(new ClusterSharding.Passivate<>(ctx.getSelf()));
    }
  }
}
