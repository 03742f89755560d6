package org.tensorcache.store.block;

import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;

/**
 * The merge that makes blocks a state-based CRDT: element-wise {@link Math#max} where both blocks
 * hold an example, the holder's values where one does, presence OR. Commutative, associative and
 * idempotent; the property tests hold it to that.
 */
final class BlockMerge {
  private BlockMerge() {}

  /** A new block holding the merge of {@code a} and {@code b}; neither is changed. */
  static Block merged(Block a, Block b) {
    checkCompatible(a, b);
    Block result = a.copy();
    into(result, b);
    return result;
  }

  /** Merges {@code src} into {@code dst}; {@code src} is not changed. */
  static void into(Block dst, Block src) {
    checkCompatible(dst, src);
    long[] mineWords = dst.presence.words;
    long[] theirWords = src.presence.words;
    for (int w = 0; w < mineWords.length; w++) {
      long mine = mineWords[w];
      long theirs = theirWords[w];
      long both = mine & theirs;
      long onlyTheirs = theirs & ~mine;
      for (int f = 0; f < dst.values.length; f++) {
        if (dst.values[f] instanceof float[] mine32) {
          mergeWord(mine32, (float[]) src.values[f], dst.widths[f], w, both, onlyTheirs);
        } else {
          mergeWordOf(
              dst.dtypes[f], dst.values[f], src.values[f], dst.widths[f], w, both, onlyTheirs);
        }
      }
      dst.presence.orWord(w, theirs);
    }
    dst.presence.recount();
  }

  /** One field's elements of the 64 examples of word {@code w}. */
  private static void mergeWord(
      float[] dst, float[] src, int width, int w, long both, long onlyTheirs) {
    int wordBase = (w << 6) * width;
    if (both == -1L) { // 64 examples on both sides: one contiguous loop the JIT vectorizes
      for (int k = wordBase, end = wordBase + 64 * width; k < end; k++) {
        dst[k] = Math.max(dst[k], src[k]);
      }
      return;
    }
    if (onlyTheirs == -1L) {
      System.arraycopy(src, wordBase, dst, wordBase, 64 * width);
      return;
    }
    for (long bits = both; bits != 0; bits &= bits - 1) {
      int base = ((w << 6) + Long.numberOfTrailingZeros(bits)) * width;
      for (int k = base, end = base + width; k < end; k++) {
        dst[k] = Math.max(dst[k], src[k]);
      }
    }
    for (long bits = onlyTheirs; bits != 0; bits &= bits - 1) {
      int base = ((w << 6) + Long.numberOfTrailingZeros(bits)) * width;
      System.arraycopy(src, base, dst, base, width);
    }
  }

  /** {@link #mergeWord} for any dtype: MAX as {@link FieldArrays#maxInto} has it. */
  private static void mergeWordOf(
      DType t, Object dst, Object src, int width, int w, long both, long onlyTheirs) {
    for (long bits = both; bits != 0; bits &= bits - 1) {
      int base = ((w << 6) + Long.numberOfTrailingZeros(bits)) * width;
      FieldArrays.maxInto(t, dst, src, base, base + width);
    }
    for (long bits = onlyTheirs; bits != 0; bits &= bits - 1) {
      int base = ((w << 6) + Long.numberOfTrailingZeros(bits)) * width;
      System.arraycopy(src, base, dst, base, width);
    }
  }

  private static void checkCompatible(Block dst, Block src) {
    if (src == null) {
      throw new IllegalArgumentException("cannot merge with null");
    }
    if (src.range() != dst.range() || !src.spec().equals(dst.spec())) {
      throw new IllegalArgumentException(
          String.format(
              "cannot merge range %d of %s into range %d of %s, expected the same spec and range",
              src.range(), src.spec(), dst.range(), dst.spec()));
    }
  }
}
