package org.tensorcache.store.block;

import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The read side of blocks, for a lookup: copies the values of a batch of indices out of a cache's
 * current blocks into the caller's arrays, on the caller's thread, allocating nothing when every
 * index is present.
 *
 * <p>This is the lookup's hot path, measured next to a plain {@code float[]} gather, so what does
 * not depend on the index is done once per call: the shape of the cache is looked at, the range
 * arithmetic set up (a shift and a mask where the range size is a power of two, as a 64-bit
 * division costs more than the rest), and the output arrays taken out of {@code out}, since the
 * compiler moves no load across the acquire read of each block and would read them again for every
 * index. Caches of one or two fields one float wide (log-probs) whose range size is a power of two
 * have a loop of their own: no loop over fields, no branch on the range size, the field arrays read
 * from the block directly, and the presence bitset read only for the rare value that equals the
 * sentinel. The loop resolves the block of every index: resolving it once per run of indices in the
 * same range was slower for random indices, a trainer's usual batch.
 */
public final class BlockGather {
  private static final int[] NONE = new int[0];

  private BlockGather() {}

  /**
   * Copies the values of {@code indices} into {@code out} (per field, {@code indices.length *
   * width} elements of its dtype, in request order) and returns the positions that were missing (an
   * empty array when none was), leaving their elements of {@code out} as they were. An index out of
   * {@code [0, n)} is an {@link IllegalArgumentException} that names it.
   *
   * @param blocks the current blocks of the cache, read with acquire semantics; the block of range
   *     {@code r}, where there is one, is a block of range {@code r} of {@code spec}
   * @param cacheId the cache's name in error messages
   * @param out per field, an array of its dtype of at least {@code indices.length * width}
   */
  public static int[] gather(
      CacheSpec spec, PublishedBlocks blocks, String cacheId, long[] indices, Object[] out) {
    if (blocks.recycled()) {
      return gatherChecked(spec, blocks, cacheId, indices, out);
    }
    List<FieldSpec> fields = spec.fields();
    int scalars = 0;
    while (scalars < fields.size()
        && fields.get(scalars).width() == 1
        && fields.get(scalars).dtype() == DType.F32) {
      scalars++;
    }
    int shift = shiftOf(spec.rangeSize());
    if (scalars == fields.size() && scalars <= 2 && shift >= 0) {
      float[] second = scalars == 2 ? (float[]) out[1] : null;
      return gatherScalars(spec, blocks, shift, cacheId, indices, (float[]) out[0], second);
    }
    return gatherRows(spec, blocks, shift, cacheId, indices, out);
  }

  /**
   * One or two fields one float wide. A value other than the sentinel proves its example present,
   * as a missing example holds the sentinel in every element; only the sentinel needs the bitset.
   */
  private static int[] gatherScalars(
      CacheSpec spec,
      PublishedBlocks blocks,
      int shift,
      String cacheId,
      long[] indices,
      float[] first,
      float[] second) {
    long n = spec.n();
    int mask = spec.rangeSize() - 1;
    Block[] slots = blocks.slots;
    int[] missing = NONE;
    int missingCount = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (Long.compareUnsigned(index, n) >= 0) { // a negative index too
        throw outOfRange(index, n, cacheId);
      }
      int range = (int) (index >>> shift);
      int at = (int) index & mask;
      // acquire pairs with the publisher's release: a block is seen whole
      Block block = PublishedBlocks.acquire(slots, range);
      float value;
      if (block == null
          || ((value = block.field0[at]) == Block.SENTINEL && !block.presence.has(at))) {
        missing = addMissing(missing, missingCount++, i, indices.length);
        continue;
      }
      first[i] = value;
      if (second != null) {
        second[i] = block.field1[at];
      }
    }
    return missingCount == missing.length ? missing : Arrays.copyOf(missing, missingCount);
  }

  /** Any fields and range size ({@code shift} -1 where it is no power of two): a row per index. */
  private static int[] gatherRows(
      CacheSpec spec,
      PublishedBlocks blocks,
      int shift,
      String cacheId,
      long[] indices,
      Object[] out) {
    long n = spec.n();
    int rangeSize = spec.rangeSize();
    Block[] slots = blocks.slots;
    int[] missing = NONE;
    int missingCount = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (Long.compareUnsigned(index, n) >= 0) { // a negative index too
        throw outOfRange(index, n, cacheId);
      }
      int range = rangeOf(index, shift, rangeSize);
      int at = offsetOf(index, range, shift, rangeSize);
      Block block = PublishedBlocks.acquire(slots, range);
      if (block == null || !block.holds(at)) {
        missing = addMissing(missing, missingCount++, i, indices.length);
        continue;
      }
      copyRow(block, at, out, i);
    }
    return missingCount == missing.length ? missing : Arrays.copyOf(missing, missingCount);
  }

  /**
   * Like {@link #gather}, for a cache whose blocks may be evicted while they are read and their
   * arrays written into other blocks (a hot tier that recycles them): each row is kept only if its
   * range's slot still holds the same block after the copy, the reader's side of that reuse.
   * Positions whose copy was not kept are reported missing like the others; their elements of
   * {@code out} may hold part of a discarded copy.
   */
  public static int[] gatherChecked(
      CacheSpec spec, PublishedBlocks blocks, String cacheId, long[] indices, Object[] out) {
    long n = spec.n();
    int rangeSize = spec.rangeSize();
    int shift = shiftOf(rangeSize);
    Block[] slots = blocks.slots;
    int[] missing = NONE;
    int missingCount = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (Long.compareUnsigned(index, n) >= 0) {
        throw outOfRange(index, n, cacheId);
      }
      int range = rangeOf(index, shift, rangeSize);
      int at = offsetOf(index, range, shift, rangeSize);
      Block block = PublishedBlocks.acquire(slots, range);
      if (block == null || !block.holds(at)) {
        missing = addMissing(missing, missingCount++, i, indices.length);
        continue;
      }
      copyRow(block, at, out, i);
      VarHandle.acquireFence(); // no load of the copy moves below the check that validates it
      if (PublishedBlocks.acquire(slots, range) != block) {
        missing = addMissing(missing, missingCount++, i, indices.length);
      }
    }
    return missingCount == missing.length ? missing : Arrays.copyOf(missing, missingCount);
  }

  /** Copies every field of the range's example {@code at} into {@code out[f]} at {@code pos}. */
  static void copyRow(Block block, int at, Object[] out, int pos) {
    Object[] values = block.values;
    int[] widths = block.widths;
    for (int f = 0; f < values.length; f++) {
      int w = widths[f];
      if (w == 1 && values[f] instanceof float[] v) {
        ((float[]) out[f])[pos] = v[at];
      } else {
        System.arraycopy(values[f], at * w, out[f], pos * w, w);
      }
    }
  }

  /** log2 of the range size when it is a power of two, else -1. */
  private static int shiftOf(int rangeSize) {
    return Integer.bitCount(rangeSize) == 1 ? Integer.numberOfTrailingZeros(rangeSize) : -1;
  }

  private static int rangeOf(long index, int shift, int rangeSize) {
    return shift >= 0 ? (int) (index >>> shift) : (int) (index / rangeSize);
  }

  /** The position of {@code index} in its range {@code range}. */
  private static int offsetOf(long index, int range, int shift, int rangeSize) {
    return shift >= 0 ? (int) index & (rangeSize - 1) : (int) (index - (long) range * rangeSize);
  }

  private static int[] addMissing(int[] missing, int count, int position, int batch) {
    if (count == missing.length) {
      missing = Arrays.copyOf(missing, Math.max(8, Math.min(batch, count * 2)));
    }
    missing[count] = position;
    return missing;
  }

  private static IllegalArgumentException outOfRange(long index, long n, String cacheId) {
    return new IllegalArgumentException(
        String.format("index %d out of range [0, %d) for cache '%s'", index, n, cacheId));
  }
}
