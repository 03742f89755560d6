package org.tensorcache.store.tier;

import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/** Small specs and blocks whose values follow from their index, for the tier's tests. */
final class TierFixtures {
  private TierFixtures() {}

  /** {@code ranges} ranges of 64 examples, one float each: 64 * 4 + 8 = 264 bytes a block. */
  static CacheSpec scalars(String name, int ranges) {
    return new CacheSpec(name, 64L * ranges, List.of(FieldSpec.scalar("logp")), 64);
  }

  /** Two fields: four floats and one long per example. */
  static CacheSpec rows(String name, int ranges, int rangeSize) {
    return new CacheSpec(
        name,
        (long) rangeSize * ranges,
        List.of(
            new FieldSpec("hidden", DType.F32, new int[] {4}),
            new FieldSpec("token", DType.I64, new int[0])),
        rangeSize);
  }

  /** A complete block of {@code range} of a {@link #rows} spec, in {@code arrays} if not null. */
  static Block rowsBlock(CacheSpec spec, int range, Object[] arrays) {
    int length = spec.rangeLength(range);
    float[] hidden = arrays == null ? new float[length * 4] : (float[]) arrays[0];
    long[] token = arrays == null ? new long[length] : (long[]) arrays[1];
    long start = spec.rangeStart(range);
    for (int i = 0; i < length; i++) {
      for (int k = 0; k < 4; k++) {
        hidden[i * 4 + k] = hiddenValue(start + i, k);
      }
      token[i] = tokenValue(start + i);
    }
    return Block.adopt(spec, range, new Object[] {hidden, token}, allPresent(length));
  }

  static float hiddenValue(long index, int k) {
    return index * 4 + k; // exact below 2^24
  }

  static long tokenValue(long index) {
    return index * 31 + 7;
  }

  /** A complete block of {@code range} of a {@link #scalars} spec: value = index. */
  static Block scalarBlock(CacheSpec spec, int range) {
    int length = spec.rangeLength(range);
    float[] v = new float[length];
    for (int i = 0; i < length; i++) {
      v[i] = spec.rangeStart(range) + i;
    }
    return Block.adopt(spec, range, new Object[] {v}, allPresent(length));
  }

  static long[] allPresent(int length) {
    long[] words = new long[(length + 63) / 64];
    for (int i = 0; i < length; i++) {
      words[i >>> 6] |= 1L << i;
    }
    return words;
  }
}
