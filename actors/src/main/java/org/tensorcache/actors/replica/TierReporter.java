package org.tensorcache.actors.replica;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.store.serialization.KryoSerializable;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.TierStats;

/**
 * Reports the node's hot tier ({@link GetTierStats}): its budget and use, and the statistics of
 * each cache in it, which {@code status} shows for every node.
 */
public final class TierReporter extends AbstractBehavior<TierReporter.Command> {
  /** Every node's tier reporter, registered with the receptionist. */
  public static final ServiceKey<Command> SERVICE_KEY =
      ServiceKey.create(Command.class, "tensorcache-tiers");

  /** The name of every node's tier reporter. */
  public static final String NAME = "tensorcache-tiers";

  /** What the tier reporter receives. */
  public interface Command extends KryoSerializable {}

  /** Asks for this node's hot tier: its budget and use, and the statistics of each cache in it. */
  public record GetTierStats(ActorRef<TierReport> replyTo) implements Command {}

  /**
   * The reply to {@link GetTierStats}: the hot tier of the node at address {@code node}, with one
   * entry per cache replicated by reference (only those are tiered; none when the node has none).
   */
  public record TierReport(
      String node,
      long budgetBytes,
      long bytesHeld,
      long peakBytesHeld,
      String policy,
      CacheTiers[] caches)
      implements KryoSerializable {}

  /** The tier statistics of one cache on the node of a {@link TierReport}. */
  public record CacheTiers(String cacheId, TierStats.Snapshot stats) implements KryoSerializable {}

  private final TensorCacheNode node;
  private final String address;

  /** A tier reporter of this node's hot tier. */
  public static Behavior<Command> create() {
    return Behaviors.setup(TierReporter::new);
  }

  private TierReporter(ActorContext<Command> ctx) {
    super(ctx);
    this.node = TensorCacheNode.get(ctx.getSystem());
    this.address = Cluster.get(ctx.getSystem()).selfMember().address().toString();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(GetTierStats.class, this::onGetTierStats).build();
  }

  private Behavior<Command> onGetTierStats(GetTierStats get) {
    get.replyTo().tell(report());
    return this;
  }

  /**
   * The hot tier now, with the caches replicated by reference in the order they were registered;
   * gossiped caches are whole in every replica and have no tiers.
   */
  private TierReport report() {
    HotTier hot = node.hotTier();
    List<CacheTiers> caches = new ArrayList<>();
    for (CacheDefinition d : node.definitions()) {
      if (hot.holds(d.cacheId())) {
        caches.add(new CacheTiers(d.cacheId(), hot.stats(d.cacheId()).snapshot()));
      }
    }
    return new TierReport(
        address,
        hot.budgetBytes(),
        hot.bytesHeld(),
        hot.peakBytesHeld(),
        hot.policy().name().toLowerCase(Locale.ROOT),
        caches.toArray(CacheTiers[]::new));
  }
}
