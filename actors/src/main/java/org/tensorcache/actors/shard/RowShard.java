package org.tensorcache.actors.shard;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.SegmentIo;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.cache.WriteBackoff;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.TokenOutput;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * Owns one range of a per-token cache on a compute node, as {@link ShardActor} owns a range of
 * fixed-shape fields: reads its segment as it starts, computes the planner's groups that miss a row
 * (requested ones first), makes each group's presence known, writes the segment once the range is
 * complete and reports it. It holds the only copy of the rows outside the segment, so it stays
 * until the idle timeout, and answers {@link ComputeRows} from them.
 */
public final class RowShard {
  private interface Internal extends ShardActor.Command {}

  private record SegmentChecked(RowBlock rows, Throwable failure) implements Internal {}

  private record GroupDone(int group, TokenOutput output, Throwable failure) implements Internal {}

  private record SegmentWritten(Throwable failure) implements Internal {}

  private record PresenceUpdated(Replicator.UpdateResponse<PresenceData> response)
      implements Internal {}

  private enum RetryWrite implements Internal {
    INSTANCE
  }

  static Behavior<ShardActor.Command> create(
      CacheDefinition cache, int range, ActorRef<ShardActor.RangeWritten> reports) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                10_000,
                stash ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<ShardActor.Command, PresenceData> presence) ->
                            new RowShard(ctx, stash, presence, cache, range, reports).loading())));
  }

  private final ActorContext<ShardActor.Command> ctx;
  private final StashBuffer<ShardActor.Command> stash;
  private final TensorCacheNode node;
  private final CacheDefinition cache;
  private final int range;
  private final RowBlock rows;
  private final RowCodec codec;
  private final RowPlan plan;
  private final RowWaiters waiters = new RowWaiters();
  private final ReplicaWriter<ShardActor.Command> writer;
  private final ActorRef<ShardActor.RangeWritten> reports;
  private final WriteBackoff backoff;
  private int computing = -1;
  private boolean writing;
  private boolean written;

  private RowShard(
      ActorContext<ShardActor.Command> ctx,
      StashBuffer<ShardActor.Command> stash,
      ReplicatorMessageAdapter<ShardActor.Command, PresenceData> presence,
      CacheDefinition cache,
      int range,
      ActorRef<ShardActor.RangeWritten> reports) {
    this.ctx = ctx;
    ctx.setLoggerName(ShardActor.class); // one logger for every shard, as operators set it
    this.stash = stash;
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.cache = cache;
    this.range = range;
    this.reports = reports;
    this.rows = RowBlock.empty(cache.spec(), range);
    this.codec = RowCodec.of(cache.spec());
    this.plan = new RowPlan(cache, rows);
    this.backoff = WriteBackoff.of(node.settings());
    var unused =
        new ReplicatorMessageAdapter<ShardActor.Command, BlockData>(
            ctx, DistributedData.get(ctx.getSystem()).replicator(), Duration.ofSeconds(5));
    this.writer = new ReplicaWriter<>(unused, presence, r -> null, PresenceUpdated::new);
    ctx.pipeToSelf(
        SegmentIo.readRows(cache, range, node.ioExecutor(), node.metrics()), SegmentChecked::new);
  }

  /** Stashes everything until the segment, if any, is read and checked. */
  private Behavior<ShardActor.Command> loading() {
    return Behaviors.receive(ShardActor.Command.class)
        .onMessage(SegmentChecked.class, this::onSegmentChecked)
        .onAnyMessage(
            m -> {
              stash.stash(m);
              return Behaviors.same();
            })
        .build();
  }

  private Behavior<ShardActor.Command> onSegmentChecked(SegmentChecked checked) {
    if (checked.failure() != null) {
      node.metrics().segmentRejected(cache.cacheId());
      ctx.getLog()
          .warn(
              "segment of range {} of {} not used: {}",
              range,
              cache.cacheId(),
              checked.failure().getMessage());
    } else if (checked.rows() != null) {
      rows.merge(checked.rows());
      written = rows.isComplete();
      publish();
    }
    return stash.unstashAll(running());
  }

  private Behavior<ShardActor.Command> running() {
    return Behaviors.receive(ShardActor.Command.class)
        .onMessageEquals(ShardActor.Fill.INSTANCE, this::onFill)
        .onMessage(ComputeRows.class, this::onComputeRows)
        .onMessage(GroupDone.class, this::onGroupDone)
        .onMessage(SegmentWritten.class, this::onSegmentWritten)
        .onMessageEquals(RetryWrite.INSTANCE, this::writeIfComplete)
        .onMessage(PresenceUpdated.class, m -> Behaviors.same())
        .onMessage(ShardActor.Compute.class, this::onFixedCompute)
        .build();
  }

  private Behavior<ShardActor.Command> onFill() {
    if (written) {
      reports.tell(new ShardActor.RangeWritten(cache.cacheId(), range)); // the last may be lost
    }
    plan.fill();
    return startNext();
  }

  private Behavior<ShardActor.Command> onComputeRows(ComputeRows asked) {
    for (long index : asked.indices()) {
      if (index < rows.start() || index >= rows.start() + rows.length()) {
        asked.replyTo().tell(StatusReply.error(outside(index)));
        return Behaviors.same();
      }
    }
    waiters.add(asked);
    waiters.answer(rows);
    for (long index : asked.indices()) {
      if (!rows.isPresent(index)) {
        plan.request(index, rows);
      }
    }
    return startNext();
  }

  private Behavior<ShardActor.Command> onFixedCompute(ShardActor.Compute compute) {
    compute
        .replyTo()
        .tell(
            StatusReply.error(
                "cache '" + cache.cacheId() + "' has per-token fields: expected a lookup of rows"));
    return Behaviors.same();
  }

  /** Starts the next due group that misses a row, unless one is being computed. */
  private Behavior<ShardActor.Command> startNext() {
    int g = computing < 0 ? plan.next(rows) : -1;
    if (g >= 0) {
      computing = g;
      List<Example> batch = plan.batch(g);
      ctx.pipeToSelf(
          CompletableFuture.supplyAsync(
              () -> node.computeRows(cache.cacheId(), batch), node.computeExecutor()),
          (out, failure) -> new GroupDone(g, out, failure));
    }
    return Behaviors.same();
  }

  private Behavior<ShardActor.Command> onGroupDone(GroupDone done) {
    computing = -1;
    if (done.failure() != null) {
      String reason = String.valueOf(done.failure().getMessage());
      ctx.getLog()
          .warn(
              "group {} of range {} of {} failed: {}",
              done.group(),
              range,
              cache.cacheId(),
              reason);
      waiters.fail(
          rows, done.group(), plan.groups(), "rows of range " + range + " not computed: " + reason);
      return startNext();
    }
    int before = rows.presentCount();
    TokenOutput out = done.output();
    Object[] values = new Object[cache.spec().fields().size()];
    for (int row = 0; row < out.size(); row++) {
      for (int f = 0; f < values.length; f++) {
        values[f] = out.value(f, row);
      }
      rows.put(out.index(row), out.tokens(row), codec.encode(out.tokens(row), values));
    }
    node.addComputed(cache.cacheId(), rows.presentCount() - before);
    if (rows.isComplete() && before < rows.length()) {
      node.metrics().rangeCompleted(cache.cacheId());
    }
    publish();
    waiters.answer(rows);
    writeIfComplete();
    return startNext();
  }

  private Behavior<ShardActor.Command> writeIfComplete() {
    if (rows.isComplete() && !writing && !written && backoff.due()) {
      writing = true;
      ctx.pipeToSelf(
          SegmentIo.writeRows(cache, rows.copy(), node.ioExecutor(), node.metrics()),
          (ok, failure) -> new SegmentWritten(failure));
    }
    return Behaviors.same();
  }

  private Behavior<ShardActor.Command> onSegmentWritten(SegmentWritten done) {
    writing = false;
    if (done.failure() != null) {
      Duration delay = backoff.failed();
      ctx.getLog()
          .error(
              "segment of range {} of {} not written ({} in a row, tried again in {} ms): {}",
              range,
              cache.cacheId(),
              backoff.failures(),
              delay.toMillis(),
              done.failure().toString());
      ctx.scheduleOnce(delay, ctx.getSelf(), RetryWrite.INSTANCE);
      return Behaviors.same();
    }
    backoff.succeeded();
    written = true;
    node.metrics().rangePersisted(cache.cacheId(), rows.length());
    reports.tell(new ShardActor.RangeWritten(cache.cacheId(), range));
    return Behaviors.same();
  }

  private void publish() {
    node.replication(cache.cacheId())
        .publish(
            writer,
            cache.cacheId(),
            rows,
            new Replicator.WriteMajority(node.settings().writeTimeout()));
  }

  private String outside(long index) {
    return String.format(
        "index %d is outside range %d [%d, %d) of cache '%s'",
        index, range, rows.start(), rows.start() + rows.length(), cache.cacheId());
  }

  /**
   * Asks for the rows of {@code indices} of the range, computing the missing ones first; the answer
   * holds a prefix of them whose rows take at most {@code maxBytes} (at least one row): the asker
   * asks again for the rest.
   */
  public record ComputeRows(
      long[] indices, int maxBytes, ActorRef<StatusReply<ComputedRows>> replyTo)
      implements ShardActor.Command {}

  /** The rows (as {@link RowCodec} codes them) of a prefix of {@link ComputeRows#indices}. */
  public record ComputedRows(long[] indices, int[] tokens, byte[][] rows)
      implements KryoSerializable {}
}
