package org.tensorcache.actors.replica;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.BlockKey;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.ReplicaView;
import org.tensorcache.actors.cache.TensorCacheNode;

/**
 * Follows every range of every registered cache in the local Distributed Data replica and publishes
 * each change to the node's {@link ReplicaView}: writes stay in actors, reads are a memory gather.
 */
public final class ReplicaPublisher extends AbstractBehavior<ReplicaPublisher.Command> {
  /** What the publisher receives. */
  public interface Command {}

  private record Changed(Replicator.SubscribeResponse<BlockData> response) implements Command {}

  private final ReplicaView view;

  /** Subscribes to every range of every cache registered on this node. */
  public static Behavior<Command> create() {
    return Behaviors.setup(
        ctx ->
            DistributedData.withReplicatorMessageAdapter(
                (ReplicatorMessageAdapter<Command, BlockData> replicator) ->
                    new ReplicaPublisher(ctx, replicator)));
  }

  private ReplicaPublisher(
      ActorContext<Command> ctx, ReplicatorMessageAdapter<Command, BlockData> replicator) {
    super(ctx);
    TensorCacheNode node = TensorCacheNode.get(ctx.getSystem());
    this.view = node.replicaView();
    for (CacheDefinition d : node.definitions()) {
      for (int r = 0; r < d.spec().rangeCount(); r++) {
        node.replication(d.cacheId()).followValues(replicator, d.cacheId(), r, Changed::new);
      }
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Changed.class, this::onChanged).build();
  }

  private Behavior<Command> onChanged(Changed changed) {
    if (changed.response() instanceof Replicator.Changed<BlockData> c) {
      view.publish(BlockKey.rangeOf(c.key()).cacheId(), c.dataValue().block());
    }
    return this;
  }
}
