package org.tensorcache.store.block;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The current block of each range of one cache, for a writer that publishes blocks it never changes
 * again and for any number of readers: a release write pairs with an acquire read, so a reader sees
 * a block whole.
 *
 * <p>It is a {@code Block[]} accessed through a {@link VarHandle} rather than an {@code
 * AtomicReferenceArray<Block>}: the compiler moves no load across an acquire read, so a lookup's
 * loop would load the atomic array's inner array and check its type again for every index, and
 * check the element's type too; here the array is a local of the loop and the element needs no
 * check.
 */
public final class PublishedBlocks {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Block[].class);

  /** Per range, its current block or null; read by {@link BlockGather} through {@link #acquire}. */
  final Block[] slots;

  /** Whether the blocks' arrays may be reused once evicted: readers then re-check each copy. */
  private volatile boolean recycled;

  /** A table of {@code ranges} ranges, none of them with a block yet. */
  public PublishedBlocks(int ranges) {
    this.slots = new Block[ranges];
  }

  /**
   * Declares that blocks published here may be evicted and their arrays written into other blocks
   * while readers copy from them; {@link BlockGather#gather} then keeps a copy only once it has
   * checked the slot still holds the block it copied.
   */
  public void markRecycled() {
    recycled = true;
  }

  /** Whether {@link #markRecycled} was called. */
  public boolean recycled() {
    return recycled;
  }

  /** The number of ranges. */
  public int length() {
    return slots.length;
  }

  /** Publishes {@code block} as the current block of {@code range}; nobody may change it after. */
  public void setRelease(int range, Block block) {
    SLOT.setRelease(slots, range, block);
  }

  /**
   * Clears {@code range} if it still holds {@code expected}, with volatile order, and returns
   * whether it did: for an evictor that must not clear a block published after the one it chose.
   */
  public boolean compareAndClear(int range, Block expected) {
    return SLOT.compareAndSet(slots, range, expected, null);
  }

  /** The current block of {@code range}, or null while none has been published. */
  public Block get(int range) {
    return (Block) SLOT.getVolatile(slots, range);
  }

  /** Like {@link #get}, with acquire rather than volatile order, which is all a reader needs. */
  public Block getAcquire(int range) {
    return acquire(slots, range);
  }

  /** The acquire read of {@code slots[range]}, for a loop that holds {@code slots} in a local. */
  static Block acquire(Block[] slots, int range) {
    return (Block) SLOT.getAcquire(slots, range);
  }
}
