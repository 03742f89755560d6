package org.tensorcache.actors.lookup;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.CacheRegistry;
import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.store.serialization.KryoSerializable;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Serves {@link GetValues} from the node's replica; the indices not there yet go to a {@link
 * LookupQuery} of their own, which asks their shards and answers. The lookup timeout counts from
 * the request or from the last time a member became unreachable or left, whichever is later, so
 * that a lookup waits for its ranges' new homes rather than failing; {@code max-wait} bounds it in
 * all. It never answers a sentinel or a missing value: the values are complete or an error.
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
  public record GetValues(String cacheId, long[] indices, ActorRef<StatusReply<Values>> replyTo)
      implements Command {}

  /** See {@link #computeMissing}: private, as it never leaves the node. */
  private record ComputeMissing(
      String cacheId, long[] indices, ActorRef<StatusReply<Values>> replyTo) implements Command {}

  /**
   * From this node's {@link LocalLookup} only: the values of {@code indices}, checked already,
   * which the replica did not hold; they are asked of their shards without looking at the replica
   * again.
   */
  static Command computeMissing(
      String cacheId, long[] indices, ActorRef<StatusReply<Values>> replyTo) {
    return new ComputeMissing(cacheId, indices, replyTo);
  }

  /**
   * The reply to {@link GetValues}: per field, {@code indices.length * width} elements of its dtype
   * ({@link org.tensorcache.fields.FieldArrays}).
   */
  public record Values(long[] indices, Object[] values) implements KryoSerializable {}

  private record MembersChanged(ClusterEvent.ClusterDomainEvent event) implements Command {}

  /**
   * When the cluster last changed, as the queries read it from their own threads: now while a
   * member is unreachable, else the last time one became unreachable or left.
   */
  static final class ClusterChanges {
    private final Set<Member> unreachable = ConcurrentHashMap.newKeySet();
    private volatile long lastDisruption = Long.MIN_VALUE;

    long lastChange() {
      return unreachable.isEmpty() ? lastDisruption : System.nanoTime();
    }
  }

  private final TensorCacheNode node;
  private final NodeSettings settings;
  private final ClusterChanges changes = new ClusterChanges();

  /** A lookup actor serving from this node's replica. */
  public static Behavior<Command> create() {
    return Behaviors.setup(LookupActor::new);
  }

  private LookupActor(ActorContext<Command> ctx) {
    super(ctx);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.settings = node.settings();
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
        .onMessage(ComputeMissing.class, this::onComputeMissing)
        .onMessage(MembersChanged.class, this::onMembersChanged)
        .build();
  }

  private Behavior<Command> onGetValues(GetValues get) {
    CacheRegistry.Registered cache;
    try {
      cache = node.registry().get(get.cacheId());
      LookupChecks.check(get.cacheId(), cache.definition().spec(), get.indices(), settings);
    } catch (IllegalArgumentException e) {
      get.replyTo().tell(StatusReply.error(e.getMessage()));
      return this;
    }
    CacheSpec spec = cache.definition().spec();
    long[] indices = get.indices();
    Object[] values = LookupChecks.newValues(spec, indices.length);
    int[] missing = cache.replication().gather(cache, indices, values, false);
    if (missing.length == 0) {
      get.replyTo().tell(StatusReply.success(new Values(indices, values)));
    } else {
      query(new LookupQuery.Request(get.cacheId(), spec, indices, missing, values, get.replyTo()));
    }
    return this;
  }

  private Behavior<Command> onComputeMissing(ComputeMissing compute) {
    CacheSpec spec = node.definition(compute.cacheId()).spec();
    long[] indices = compute.indices();
    int[] all = new int[indices.length];
    Arrays.setAll(all, i -> i);
    Object[] values = LookupChecks.newValues(spec, indices.length);
    query(
        new LookupQuery.Request(compute.cacheId(), spec, indices, all, values, compute.replyTo()));
    return this;
  }

  private void query(LookupQuery.Request request) {
    getContext().spawnAnonymous(LookupQuery.create(request, settings, changes));
  }

  private Behavior<Command> onMembersChanged(MembersChanged changed) {
    if (changed.event() instanceof ClusterEvent.UnreachableMember u) {
      changes.unreachable.add(u.member());
      changes.lastDisruption = System.nanoTime();
    } else if (changed.event() instanceof ClusterEvent.ReachableMember r) {
      changes.unreachable.remove(r.member());
    } else if (changed.event() instanceof ClusterEvent.MemberRemoved removed) {
      changes.unreachable.remove(removed.member());
      changes.lastDisruption = System.nanoTime();
    }
    return this;
  }
}
