package org.tensorcache.actors.cache;

import java.util.function.Function;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.tensorcache.store.block.Block;

/**
 * Merges part of a range into the replicas from an actor: its values, or only which examples are
 * present when the cache is replicated by reference.
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

  /** Merges {@code part} (never mutated afterwards) into the range's replicated data. */
  public void write(
      String cacheId, Block part, boolean byReference, Replicator.WriteConsistency consistency) {
    if (byReference) {
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
    } else {
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
  }
}
