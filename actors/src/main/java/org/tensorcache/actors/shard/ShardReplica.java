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
import org.tensorcache.store.block.Block;

/**
 * How a shard makes its computed parts known: the values by gossip (written to a majority), or, for
 * a range replicated by reference, only which examples are present. Counts the value writes not
 * acknowledged yet, since a shard stops only once its values are in the replicas.
 */
final class ShardReplica<C> {
  private final String cacheId;
  private final boolean byReference;
  private final Duration writeTimeout;
  private final ReplicaWriter<C> writer;
  private int updating;

  ShardReplica(
      ActorContext<C> ctx,
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      boolean byReference,
      Duration writeTimeout,
      Function<Replicator.UpdateResponse<BlockData>, C> updated,
      Function<Replicator.UpdateResponse<PresenceData>, C> presenceUpdated) {
    this.cacheId = cacheId;
    this.byReference = byReference;
    this.writeTimeout = writeTimeout;
    var presence =
        new ReplicatorMessageAdapter<C, PresenceData>(
            ctx, DistributedData.get(ctx.getSystem()).replicator(), Duration.ofSeconds(5));
    this.writer = new ReplicaWriter<>(replicator, presence, updated, presenceUpdated);
  }

  /** Writes a part of the range: its values, or by reference only its presence. */
  void publish(Block part) {
    if (!byReference) {
      updating++;
    }
    writer.write(cacheId, part, byReference, new Replicator.WriteMajority(writeTimeout));
  }

  /** A value write was answered. */
  void updated(ActorContext<C> ctx, Replicator.UpdateResponse<BlockData> response) {
    if (!(response instanceof Replicator.UpdateSuccess<BlockData>)) {
      // the local replica has the values and gossip spreads them; only the extra copies timed out
      ctx.getLog().debug("{}: {}", cacheId, response);
    }
    updating--;
  }

  /** Whether every value write has been answered. */
  boolean settled() {
    return updating == 0;
  }
}
