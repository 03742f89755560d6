package org.tensorcache.store.tier;

import java.lang.invoke.VarHandle;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;

/**
 * The read of a hot block whose arrays {@link HotTier} may recycle: the optimistic read of a
 * seqlock, as {@link ArrayPool} describes it. A lookup over a tier that recycles arrays reads this
 * way (the batch gather of a cache does the same per index); it costs one more acquire load and a
 * fence, which on x86 is no instruction at all.
 */
public final class OptimisticRead {
  private OptimisticRead() {}

  /**
   * Copies every field of example {@code index} of {@code range} out of its hot block into {@code
   * out[f]} at {@code position * width}: a copy taken while the block was being evicted is
   * discarded and read again from what the slot holds then. Returns false when the range has no
   * block or the example is missing there; the row of {@code out} may then hold what a discarded
   * copy left in it.
   *
   * @param slots the cache's blocks, which the tier publishes
   * @param range the range of {@code index}
   */
  public static boolean gather(
      PublishedBlocks slots, int range, long index, Object[] out, int position) {
    Block block = slots.getAcquire(range);
    while (block != null) {
      if (!block.gather(index, out, position)) {
        return false; // presence is never recycled: the answer holds for this block
      }
      // no load of the copy may move below the check that validates it
      VarHandle.acquireFence();
      Block now = slots.getAcquire(range);
      if (now == block) {
        return true;
      }
      block = now; // evicted or replaced while copying
    }
    return false;
  }
}
