package org.tensorcache.actors.lookup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.serialization.KryoSerializable;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Serves {@link GetValues} from the node's replica; indices not there yet become priority compute
 * requests to the shards of their ranges, and the answer waits for them. A shard that does not
 * answer is asked again (the request is idempotent): it may have moved to another node, and a
 * request delivered to a node that died is lost. The lookup timeout counts from the request or from
 * the last time a member became unreachable or left, whichever is later, so that a lookup waits for
 * its ranges' new homes rather than failing; {@code max-wait} bounds it in all. It never answers a
 * sentinel or a missing value: the values are complete or an error.
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

  /** How the reply to a lookup that ran past the lookup timeout begins its reason. */
  private static final String NOT_COMPUTED_WITHIN = "not computed within";

  /** What the lookup actor receives. */
  public interface Command extends KryoSerializable {}

  /** The values of {@code indices} of a cache, in request order. */
  public record GetValues(String cacheId, long[] indices, ActorRef<StatusReply<Values>> replyTo)
      implements Command {}

  /**
   * The reply to {@link GetValues}: per field, {@code indices.length * width} elements of its dtype
   * ({@link org.tensorcache.fields.FieldArrays}).
   */
  public record Values(long[] indices, Object[] values) implements KryoSerializable {}

  private record MembersChanged(ClusterEvent.ClusterDomainEvent event) implements Command {}

  private record PartDone(long request, Part part, ShardActor.Computed computed, Throwable failure)
      implements Command {}

  /** The positions of one request that one range's shard is asked for, and how often so far. */
  private record Part(int range, int[] positions, long[] indices, int attempt) {
    Part next() {
      return new Part(range, positions, indices, attempt + 1);
    }
  }

  private static final class Pending {
    final GetValues request;
    final Object[] values;
    final long start = System.nanoTime();
    int parts;

    Pending(GetValues request, Object[] values, int parts) {
      this.request = request;
      this.values = values;
      this.parts = parts;
    }
  }

  private final TensorCacheNode node;
  private final NodeSettings settings;
  private final ClusterSharding sharding;
  private final Map<Long, Pending> pending = new HashMap<>();
  private final Set<Member> unreachable = new HashSet<>();
  private long lastDisruption = Long.MIN_VALUE;
  private long nextRequest;

  /** A lookup actor serving from this node's replica. */
  public static Behavior<Command> create() {
    return Behaviors.setup(LookupActor::new);
  }

  private LookupActor(ActorContext<Command> ctx) {
    super(ctx);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.settings = node.settings();
    this.sharding = ClusterSharding.get(ctx.getSystem());
    ActorRef<ClusterEvent.ClusterDomainEvent> events =
        ctx.messageAdapter(ClusterEvent.ClusterDomainEvent.class, MembersChanged::new);
    var subscriptions = Cluster.get(ctx.getSystem()).subscriptions();
    subscriptions.tell(Subscribe.create(events.narrow(), ClusterEvent.ReachabilityEvent.class));
    subscriptions.tell(Subscribe.create(events.narrow(), ClusterEvent.MemberRemoved.class));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(GetValues.class, this::onGetValues)
        .onMessage(PartDone.class, this::onPartDone)
        .onMessage(MembersChanged.class, this::onMembersChanged)
        .build();
  }

  private Behavior<Command> onGetValues(GetValues get) {
    CacheSpec spec;
    try {
      spec = node.definition(get.cacheId()).spec();
      LookupChecks.check(get.cacheId(), spec, get.indices(), settings);
    } catch (IllegalArgumentException e) {
      get.replyTo().tell(StatusReply.error(e.getMessage()));
      return this;
    }
    long[] indices = get.indices();
    Object[] values = LookupChecks.newValues(spec, indices.length);
    int[] missing = node.replication(get.cacheId()).gather(get.cacheId(), indices, values, false);
    if (missing.length == 0) {
      get.replyTo().tell(StatusReply.success(new Values(indices, values)));
      return this;
    }
    List<Part> parts = split(spec, indices, missing);
    long id = nextRequest++;
    Pending p = new Pending(get, values, parts.size());
    pending.put(id, p);
    parts.forEach(part -> ask(id, get.cacheId(), part, deadline(p)));
    return this;
  }

  /**
   * When a request fails: the lookup timeout after its start or after the cluster last changed
   * (now, while a member is unreachable), and never later than {@code max-wait} after its start.
   */
  private long deadline(Pending p) {
    long changed = unreachable.isEmpty() ? lastDisruption : System.nanoTime();
    long from = Math.max(p.start, changed);
    return Math.min(
        p.start + settings.lookupMaxWait().toNanos(), from + settings.lookupTimeout().toNanos());
  }

  private Behavior<Command> onMembersChanged(MembersChanged changed) {
    if (changed.event() instanceof ClusterEvent.UnreachableMember u) {
      unreachable.add(u.member());
      lastDisruption = System.nanoTime();
    } else if (changed.event() instanceof ClusterEvent.ReachableMember r) {
      unreachable.remove(r.member());
    } else if (changed.event() instanceof ClusterEvent.MemberRemoved removed) {
      unreachable.remove(removed.member());
      lastDisruption = System.nanoTime();
    }
    return this;
  }

  /**
   * Asks the part's shard, waiting {@code retry-after} for the first attempt, twice and then three
   * times as long for the next ones (a long computation is not asked for too often, and a lost
   * request costs little), never past the request's deadline.
   */
  private void ask(long id, String cacheId, Part part, long deadline) {
    Duration wait = settings.lookupRetryAfter().multipliedBy(Math.min(part.attempt(), 2) + 1);
    Duration left = Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    getContext()
        .askWithStatus(
            ShardActor.Computed.class,
            sharding.entityRefFor(
                ShardActor.ENTITY_KEY, RangeId.of(cacheId, part.range()).toString()),
            wait.compareTo(left) < 0 ? wait : left,
            replyTo -> new ShardActor.Compute(part.indices(), replyTo),
            (computed, failure) -> new PartDone(id, part, computed, failure));
  }

  /** Groups missing positions by range, in parts whose reply fits one remote message. */
  private List<Part> split(CacheSpec spec, long[] indices, int[] missing) {
    int perPart = Math.max(1, settings.maxReplyBytes() / LookupChecks.rowBytes(spec));
    Map<Integer, List<Integer>> byRange = new LinkedHashMap<>();
    for (int m : missing) {
      byRange.computeIfAbsent(spec.rangeOf(indices[m]), r -> new ArrayList<>()).add(m);
    }
    List<Part> parts = new ArrayList<>();
    byRange.forEach(
        (range, positions) -> {
          for (int from = 0; from < positions.size(); from += perPart) {
            int[] p =
                positions.subList(from, Math.min(positions.size(), from + perPart)).stream()
                    .mapToInt(Integer::intValue)
                    .toArray();
            long[] wanted = new long[p.length];
            for (int i = 0; i < p.length; i++) {
              wanted[i] = indices[p[i]];
            }
            parts.add(new Part(range, p, wanted, 0));
          }
        });
    return parts;
  }

  private Behavior<Command> onPartDone(PartDone done) {
    Pending p = pending.get(done.request());
    if (p == null) {
      return this; // already failed
    }
    if (done.failure() instanceof TimeoutException && System.nanoTime() < deadline(p)) {
      ask(done.request(), p.request.cacheId(), done.part().next(), deadline(p));
      return this;
    }
    if (done.failure() != null) {
      pending.remove(done.request());
      String reason =
          String.format(
              "lookup of %d indices of cache '%s' failed: %s",
              p.request.indices().length, p.request.cacheId(), describe(done.failure(), p));
      // a timeout is answered as a type of its own, which the asking node counts as one
      p.request
          .replyTo()
          .tell(
              done.failure() instanceof TimeoutException
                  ? StatusReply.error(new LookupTimeoutException(reason))
                  : StatusReply.error(reason));
      return this;
    }
    CacheSpec spec = node.definition(p.request.cacheId()).spec();
    int[] positions = done.part().positions();
    for (int f = 0; f < p.values.length; f++) {
      int width = spec.fields().get(f).width();
      Object src = done.computed().values()[f];
      for (int i = 0; i < positions.length; i++) {
        System.arraycopy(src, i * width, p.values[f], positions[i] * width, width);
      }
    }
    if (--p.parts == 0) {
      pending.remove(done.request());
      p.request.replyTo().tell(StatusReply.success(new Values(p.request.indices(), p.values)));
    }
    return this;
  }

  private String describe(Throwable failure, Pending p) {
    if (!(failure instanceof TimeoutException)) {
      return failure.getMessage();
    }
    long waited = (System.nanoTime() - p.start) / 1_000_000;
    String timeout = NOT_COMPUTED_WITHIN + " " + settings.lookupTimeout().toMillis() + " ms";
    return waited < settings.lookupTimeout().toMillis() + 1_000
        ? timeout
        : String.format(
            "%s of a stable cluster (members changed while it waited %d ms)", timeout, waited);
  }
}
