package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.BlockGather;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.block.RangeData;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Ranges small enough to gossip: every node's replica holds the values, a lookup is a memory gather
 * from the {@link ReplicaView}, and the fill driver writes each complete range's segment.
 */
public final class ByValue implements Replication {
  private final ReplicaView view;

  ByValue(ReplicaView view) {
    this.view = view;
  }

  @Override
  public void registered(String cacheId, CacheSpec spec, PublishedBlocks blocks) {}

  @Override
  public <C> void publish(
      ReplicaWriter<C> writer,
      String cacheId,
      RangeData part,
      Replicator.WriteConsistency consistency) {
    writer.writeValues(cacheId, (Block) part, consistency); // by value, every range is a block
  }

  @Override
  public <C> void load(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      ActorRef<C> self,
      Function<Replicator.GetResponse<BlockData>, C> loaded,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed) {
    BlockKey key = BlockKey.of(cacheId, range);
    replicator.askGet(r -> new Replicator.Get<>(key, Replicator.readLocal(), r), loaded::apply);
    replicator.subscribe(key, changed::apply);
  }

  @Override
  public <C> void followProgress(
      ReplicaWriter<C> writer,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<?>, C> changed) {
    writer.followValues(cacheId, range, changed::apply);
  }

  @Override
  public <C> void followValues(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed) {
    replicator.subscribe(BlockKey.of(cacheId, range), changed::apply);
  }

  @Override
  public boolean shardWritesSegment() {
    return false;
  }

  @Override
  public int[] gather(CacheRegistry.Registered cache, long[] indices, Object[] out, boolean count) {
    // publish's release pairs with the acquire reads there: each block is seen whole
    CacheDefinition definition = cache.definition();
    return BlockGather.gather(
        definition.spec(), cache.blocks(), definition.cacheId(), indices, out);
  }

  @Override
  public void servedCold(String cacheId, int rows) {}

  @Override
  public void prefetch(Runnable ahead) {}
}
