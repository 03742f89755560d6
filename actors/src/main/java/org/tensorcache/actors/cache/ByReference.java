package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.block.RangeData;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.Tier;

/**
 * Ranges too large to gossip: only which examples are present is replicated. The values stay with
 * the range's shard, which writes the segment; a lookup reads the hot tier, then the mapped segment
 * ({@link TieredView}), and asks the shard for the rest.
 */
public final class ByReference implements Replication {
  private final TieredView tiers;
  private final HotTier hot;

  ByReference(TieredView tiers, HotTier hot) {
    this.tiers = tiers;
    this.hot = hot;
  }

  @Override
  public void registered(String cacheId, CacheSpec spec, PublishedBlocks blocks) {
    blocks.markRecycled(); // every reader of these slots re-checks what it copied
    hot.register(cacheId, spec, blocks);
  }

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
    return tiers.gather(cache.definition().cacheId(), indices, out, count);
  }

  @Override
  public void servedCold(String cacheId, int rows) {
    tiers.stats(cacheId).hit(Tier.COLD, rows);
  }

  @Override
  public void prefetch(Runnable ahead) {
    ahead.run();
  }
}
