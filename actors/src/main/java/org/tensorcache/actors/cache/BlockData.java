package org.tensorcache.actors.cache;

import java.util.Optional;
import org.apache.pekko.cluster.ddata.AbstractDeltaReplicatedData;
import org.apache.pekko.cluster.ddata.AbstractReplicatedData;
import org.apache.pekko.cluster.ddata.DeltaReplicatedData;
import org.apache.pekko.cluster.ddata.ReplicatedDelta;
import org.tensorcache.store.block.Block;

/**
 * One range's values as a delta CRDT for Distributed Data: merge is the block's element-wise MAX
 * and presence OR, so replicas converge whatever the order, repetition or grouping of updates. The
 * delta of a local update is a block holding only the new examples. The wrapped blocks are never
 * mutated after construction, so a {@link #block()} can be shared across threads.
 */
public final class BlockData extends AbstractDeltaReplicatedData<BlockData, BlockData.Delta> {
  private final Block block;
  private final Block delta;

  private BlockData(Block block, Block delta) {
    this.block = block;
    this.delta = delta;
  }

  /** Wraps {@code block}, which the caller must no longer mutate. */
  public static BlockData of(Block block) {
    return new BlockData(block, null);
  }

  /** The merged values; never mutate it. */
  public Block block() {
    return block;
  }

  /** This data with {@code part} merged in, recorded as delta; the caller must not mutate part. */
  public BlockData with(Block part) {
    return new BlockData(block.merge(part), delta == null ? part : delta.merge(part));
  }

  @Override
  public BlockData mergeData(BlockData that) {
    return that.block.equals(block) ? this : new BlockData(block.merge(that.block), null);
  }

  @Override
  public Optional<Delta> deltaData() {
    return Optional.ofNullable(delta).map(Delta::new);
  }

  @Override
  public BlockData mergeDeltaData(Delta that) {
    return mergeData(new BlockData(that.block, null));
  }

  @Override
  public BlockData resetDelta() {
    return delta == null ? this : new BlockData(block, null);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BlockData b && b.block.equals(block);
  }

  @Override
  public int hashCode() {
    return block.hashCode();
  }

  @Override
  public String toString() {
    return "BlockData(" + block + ")";
  }

  /** The examples added by one or more local updates, shipped instead of the whole block. */
  public static final class Delta extends AbstractReplicatedData<Delta> implements ReplicatedDelta {
    private final Block block;

    /** A delta holding {@code block}, which the caller must no longer mutate. */
    public Delta(Block block) {
      this.block = block;
    }

    /** The delta's examples; never mutate it. */
    public Block block() {
      return block;
    }

    @Override
    public Delta mergeData(Delta that) {
      return new Delta(block.merge(that.block));
    }

    @Override
    public DeltaReplicatedData zero() {
      return BlockData.of(Block.empty(block.spec(), block.range()));
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Delta d && d.block.equals(block);
    }

    @Override
    public int hashCode() {
      return block.hashCode();
    }
  }
}
