package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.RangeData;

/**
 * An actor's access to the replicated ranges: the values of a range ({@link BlockData}) or only
 * which of its examples are present ({@link PresenceData}); which of the two a cache uses is its
 * {@link Replication}'s choice.
 *
 * @param <C> the actor's command type, which the replicator's answers are adapted to
 */
public final class ReplicaWriter<C> {
  private final ReplicatorMessageAdapter<C, BlockData> blocks;
  private final ReplicatorMessageAdapter<C, PresenceData> presence;
  private final Function<Replicator.UpdateResponse<BlockData>, C> onBlock;
  private final Function<Replicator.UpdateResponse<PresenceData>, C> onPresence;

  /** Writes through these adapters; the answers become the given commands. */
  public ReplicaWriter(
      ReplicatorMessageAdapter<C, BlockData> blocks,
      ReplicatorMessageAdapter<C, PresenceData> presence,
      Function<Replicator.UpdateResponse<BlockData>, C> onBlock,
      Function<Replicator.UpdateResponse<PresenceData>, C> onPresence) {
    this.blocks = blocks;
    this.presence = presence;
    this.onBlock = onBlock;
    this.onPresence = onPresence;
  }

  /** Merges the values of {@code part} (never mutated afterwards) into its range's block. */
  void writeValues(String cacheId, Block part, Replicator.WriteConsistency consistency) {
    blocks.askUpdate(
        r ->
            new Replicator.Update<>(
                BlockKey.of(cacheId, part.range()),
                BlockData.of(Block.empty(part.spec(), part.range())),
                consistency,
                r,
                data -> data.with(part)),
        onBlock::apply);
  }

  /** Merges which examples {@code part} holds into its range's presence. */
  void writePresence(String cacheId, RangeData part, Replicator.WriteConsistency consistency) {
    long[] words = part.presenceWords();
    presence.askUpdate(
        r ->
            new Replicator.Update<>(
                PresenceKey.of(cacheId, part.range()),
                PresenceData.empty(part.length()),
                consistency,
                r,
                p -> p.mergeData(new PresenceData(words))),
        onPresence::apply);
  }

  /** Follows the block of a range. */
  void followValues(
      String cacheId, int range, Function<Replicator.SubscribeResponse<BlockData>, C> changed) {
    blocks.subscribe(BlockKey.of(cacheId, range), changed::apply);
  }

  /** Follows the presence of a range. */
  void followPresence(
      String cacheId, int range, Function<Replicator.SubscribeResponse<PresenceData>, C> changed) {
    presence.subscribe(PresenceKey.of(cacheId, range), changed::apply);
  }
}
