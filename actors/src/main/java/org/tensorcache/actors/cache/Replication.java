package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.block.RangeData;
import org.tensorcache.store.spec.CacheSpec;

/**
 * How the ranges of one cache reach the nodes, chosen once when the cache is registered ({@link
 * #choose}): {@link ByValue}, the blocks themselves gossiped to every node, or {@link ByReference},
 * only which examples are present gossiped while the values stay with the range's shard and its
 * segment and are read through the tiers. Everything that differs between the two is here: how a
 * range is published and followed, how a lookup gathers it, and who writes its segment. The actors
 * that use it do not ask which one they have.
 */
public sealed interface Replication permits ByValue, ByReference, ByRows {

  /**
   * By value when a range's values fit the gossip budget ({@code tensorcache.gossip-budget}), else
   * by reference.
   */
  static Replication choose(CacheSpec spec, TensorCacheNode node) {
    if (spec.perToken()) {
      return new ByRows(node.rowTier());
    }
    long rowBytes = 0;
    for (var f : spec.fields()) {
      rowBytes += (long) f.width() * f.dtype().bytes();
    }
    return rowBytes * spec.rangeSize() > node.settings().gossipBudget()
        ? new ByReference(node.tieredView(), node.hotTier())
        : new ByValue(node.replicaView());
  }

  /** The cache was just registered with these published blocks, which nobody has read yet. */
  void registered(String cacheId, CacheSpec spec, PublishedBlocks blocks);

  /** Merges {@code part} of a range (never changed afterwards) into the replicas. */
  <C> void publish(
      ReplicaWriter<C> writer,
      String cacheId,
      RangeData part,
      Replicator.WriteConsistency consistency);

  /**
   * A starting shard's range as the local replica holds it: {@code loaded} with the replica's
   * answer, then {@code changed} with every change; by reference {@code loaded} with null at once,
   * as only the shard and its segment hold values.
   */
  <C> void load(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      ActorRef<C> self,
      Function<Replicator.GetResponse<BlockData>, C> loaded,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed);

  /**
   * Follows how far a range is filled, for the fill driver: its gossiped block, or its presence.
   */
  <C> void followProgress(
      ReplicaWriter<C> writer,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<?>, C> changed);

  /** Follows a range's gossiped values, for the node's read view; by reference there are none. */
  <C> void followValues(
      ReplicatorMessageAdapter<C, BlockData> replicator,
      String cacheId,
      int range,
      Function<Replicator.SubscribeResponse<BlockData>, C> changed);

  /**
   * Whether the range's shard writes its segment: by reference it holds the only copy of the values
   * (and stays to serve them); by value the fill driver writes it from the gossiped block and the
   * shard stops once its values are in the replicas.
   */
  boolean shardWritesSegment();

  /**
   * Whether the fill driver asks the shard of a range not persisted yet to fill it, given whether
   * the replicas show the range {@code complete}: by reference always, since the shard reports the
   * segment it wrote again on every fill.
   */
  default boolean driverAsksShard(boolean complete) {
    return shardWritesSegment() || !complete;
  }

  /** Whether the fill driver writes the segment of a range the replicas show {@code complete}. */
  default boolean driverWritesSegment(boolean complete) {
    return complete && !shardWritesSegment();
  }

  /**
   * Copies what this node holds of {@code indices} into {@code out} (per field, {@code
   * indices.length * width} elements, in request order) and returns the positions it does not hold;
   * {@code count}: whether the read counts in the tier statistics.
   */
  int[] gather(CacheRegistry.Registered cache, long[] indices, Object[] out, boolean count);

  /** {@code rows} were served from their shards (the cold path), for the tier statistics. */
  void servedCold(String cacheId, int rows);

  /**
   * Runs {@code ahead}, which brings a trainer's next steps into memory, when that helps: by value
   * every row is in memory on every node already.
   */
  void prefetch(Runnable ahead);
}
