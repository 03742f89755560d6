package org.tensorcache.actors.lookup;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.replica.ReplicaView;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.serialization.KryoSerializable;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Serves {@link GetBatch} from the node's replica; indices not there yet become priority compute
 * requests to the shards of their ranges, and the answer waits for them, bounded by the lookup
 * timeout. It never answers a sentinel or a missing value: a batch is complete or an error.
 */
public final class LookupActor extends AbstractBehavior<LookupActor.Command> {
  /**
   * Every node's lookup actor, registered with the receptionist: members without a replica find one
   * here.
   */
  public static final ServiceKey<Command> SERVICE_KEY =
      ServiceKey.create(Command.class, "tensorcache-lookup");

  /** The name of every node's lookup actor: a process that is no member selects {@link #PATH}. */
  public static final String NAME = "tensorcache-lookup";

  /** Where every node's lookup actor lives, below the node's address. */
  public static final String PATH = "/system/" + NAME;

  /** What the lookup actor receives. */
  public interface Command extends KryoSerializable {}

  /** The values of {@code indices} of a cache, in request order. */
  public record GetBatch(String cacheId, long[] indices, ActorRef<StatusReply<Batch>> replyTo)
      implements Command {}

  /** Per field, {@code indices.length * width} floats in request order. */
  public record Batch(long[] indices, float[][] values) implements KryoSerializable {}

  private record PartDone(
      long request, int[] positions, ShardActor.Computed computed, Throwable failure)
      implements Command {}

  private static final class Pending {
    final GetBatch request;
    final float[][] values;
    int parts;

    Pending(GetBatch request, float[][] values, int parts) {
      this.request = request;
      this.values = values;
      this.parts = parts;
    }
  }

  private final TensorCacheNode node;
  private final ReplicaView view;
  private final Map<Long, Pending> pending = new HashMap<>();
  private long nextRequest;

  /** A lookup actor serving from this node's replica. */
  public static Behavior<Command> create() {
    return Behaviors.setup(LookupActor::new);
  }

  private LookupActor(ActorContext<Command> ctx) {
    super(ctx);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.view = node.view();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(GetBatch.class, this::onGetBatch)
        .onMessage(PartDone.class, this::onPartDone)
        .build();
  }

  private Behavior<Command> onGetBatch(GetBatch get) {
    CacheSpec spec;
    try {
      spec = view.spec(get.cacheId());
      BatchRequest.check(get.cacheId(), spec, get.indices(), node.settings());
    } catch (IllegalArgumentException e) {
      get.replyTo().tell(StatusReply.error(e.getMessage()));
      return this;
    }
    long[] indices = get.indices();
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[indices.length * spec.fields().get(f).width()];
    }
    int[] missing = view.gather(get.cacheId(), indices, values);
    int missingCount = missing.length;
    if (missingCount == 0) {
      get.replyTo().tell(StatusReply.success(new Batch(indices, values)));
      return this;
    }
    List<int[]> parts = split(spec, indices, missing, missingCount);
    long id = nextRequest++;
    pending.put(id, new Pending(get, values, parts.size()));
    ClusterSharding sharding = ClusterSharding.get(getContext().getSystem());
    for (int[] positions : parts) {
      long[] wanted = new long[positions.length];
      for (int i = 0; i < positions.length; i++) {
        wanted[i] = indices[positions[i]];
      }
      int range = spec.rangeOf(wanted[0]);
      getContext()
          .askWithStatus(
              ShardActor.Computed.class,
              sharding.entityRefFor(
                  ShardActor.ENTITY_KEY, ShardActor.entityId(get.cacheId(), range)),
              node.settings().lookupTimeout(),
              replyTo -> new ShardActor.Compute(wanted, replyTo),
              (computed, failure) -> new PartDone(id, positions, computed, failure));
    }
    return this;
  }

  /** Groups missing positions by range, in parts whose reply fits one remote message. */
  private List<int[]> split(CacheSpec spec, long[] indices, int[] missing, int count) {
    int perPart = Math.max(1, node.settings().maxReplyBytes() / BatchRequest.rowBytes(spec));
    Map<Integer, List<Integer>> byRange = new LinkedHashMap<>();
    for (int m = 0; m < count; m++) {
      byRange
          .computeIfAbsent(spec.rangeOf(indices[missing[m]]), r -> new ArrayList<>())
          .add(missing[m]);
    }
    List<int[]> parts = new ArrayList<>();
    for (List<Integer> positions : byRange.values()) {
      for (int from = 0; from < positions.size(); from += perPart) {
        parts.add(
            positions.subList(from, Math.min(positions.size(), from + perPart)).stream()
                .mapToInt(Integer::intValue)
                .toArray());
      }
    }
    return parts;
  }

  private Behavior<Command> onPartDone(PartDone done) {
    Pending p = pending.get(done.request());
    if (p == null) {
      return this; // already failed
    }
    if (done.failure() != null) {
      pending.remove(done.request());
      p.request
          .replyTo()
          .tell(
              StatusReply.error(
                  String.format(
                      "lookup of %d indices of cache '%s' failed: %s",
                      p.request.indices().length, p.request.cacheId(), describe(done.failure()))));
      return this;
    }
    CacheSpec spec = view.spec(p.request.cacheId());
    for (int f = 0; f < p.values.length; f++) {
      int width = spec.fields().get(f).width();
      float[] src = done.computed().values()[f];
      for (int i = 0; i < done.positions().length; i++) {
        System.arraycopy(src, i * width, p.values[f], done.positions()[i] * width, width);
      }
    }
    if (--p.parts == 0) {
      pending.remove(done.request());
      p.request.replyTo().tell(StatusReply.success(new Batch(p.request.indices(), p.values)));
    }
    return this;
  }

  private String describe(Throwable failure) {
    if (failure instanceof java.util.concurrent.TimeoutException) {
      return "not computed within " + node.settings().lookupTimeout().toMillis() + " ms";
    }
    return failure.getMessage();
  }
}
