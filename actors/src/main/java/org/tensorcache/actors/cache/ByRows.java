package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.block.RangeData;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.Tier;

/**
 * Per-token caches: by reference, as every range of rows is too large to gossip. Only which
 * examples are present is replicated; the rows stay with the range's shard, which writes the
 * segment, and a lookup reads them from the {@link RowTier} or asks the shard ({@code
 * LocalLookup#lookupRows}). Rows have no fixed width, so the fixed-shape gather refuses them.
 */
public final class ByRows implements Replication {
  private final RowTier rows;

  ByRows(RowTier rows) {
    this.rows = rows;
  }

  /** The node's memory of rows. */
  public RowTier rows() {
    return rows;
  }

  @Override
  public void registered(String cacheId, CacheSpec spec, PublishedBlocks blocks) {}

  @Override
  public <C> void publish(
      ReplicaWriter<C> writer,
      String cacheId,
      RangeData part,
      Replicator.WriteConsistency consistency) {
    writer.writePresence(cacheId, part, consistency);
  }

  @Override
  public <C> void load(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      ActorRef<C> self,
      Function<Replicator.GetResponse<BlockData>, C> loaded,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed) {
    self.tell(loaded.apply(null));
  }

  @Override
  public <C> void followProgress(
      ReplicaWriter<C> writer,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<?>, C> changed) {
    writer.followPresence(cacheId, range, changed::apply);
  }

  @Override
  public <C> void followValues(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed) {}

  @Override
  public boolean shardWritesSegment() {
    return true;
  }

  @Override
  public int[] gather(CacheRegistry.Registered cache, long[] indices, Object[] out, boolean count) {
    throw new IllegalArgumentException(
        "cache '"
            + cache.definition().cacheId()
            + "' has per-token fields "
            + cache.definition().spec().fields()
            + ": its values are ragged, expected a lookup of rows (protocol version 5)");
  }

  @Override
  public void servedCold(String cacheId, int count) {
    rows.served(cacheId, Tier.COLD, count);
  }

  @Override
  public void prefetch(Runnable ahead) {
    ahead.run();
  }
}
