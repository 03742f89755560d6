package org.tensorcache.actors.shard;

import java.time.Duration;
import java.util.function.Function;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.cache.ReplicaWriter;
import org.tensorcache.actors.cache.Replication;
import org.tensorcache.store.block.Block;

/**
 * How a shard makes its computed parts known, as its cache's {@link Replication} says (written to a
 * majority). Counts the writes not acknowledged yet, since a shard stops only once its values are
 * in the replicas.
 */
final class ShardReplica<C> {
  private final String cacheId;
  private final Replication replication;
  private final Duration writeTimeout;
  private final ReplicaWriter<C> writer;
  private int updating;

  ShardReplica(
      ActorContext<C> ctx,
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      Replication replication,
      Duration writeTimeout,
      Function<Replicator.UpdateResponse<BlockData>, C> updated,
      Function<Replicator.UpdateResponse<PresenceData>, C> presenceUpdated) {
    this.cacheId = cacheId;
    this.replication = replication;
    this.writeTimeout = writeTimeout;
    var presence =
        new ReplicatorMessageAdapter<C, PresenceData>(
            ctx, DistributedData.get(ctx.getSystem()).replicator(), Duration.ofSeconds(5));
    this.writer = new ReplicaWriter<>(replicator, presence, updated, presenceUpdated);
  }

  /** Writes a part of the range into the replicas. */
  void publish(Block part) {
    updating++;
    replication.publish(writer, cacheId, part, new Replicator.WriteMajority(writeTimeout));
  }

  /** A write was answered. */
  void updated(ActorContext<C> ctx, Replicator.UpdateResponse<?> response) {
    if (!(response instanceof Replicator.UpdateSuccess<?>)) {
      // the local replica has the part and gossip spreads it; only the extra copies timed out
      ctx.getLog().debug("{}: {}", cacheId, response);
    }
    updating--;
  }

  /**
   * Whether the shard may stop once its range is complete: every write answered, and the values in
   * the replicas rather than only here (a shard that writes its segment holds the only copy).
   */
  boolean mayStop() {
    return updating == 0 && !replication.shardWritesSegment();
  }
}
