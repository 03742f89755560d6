package org.tensorcache.store.block;

import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The values of one range of a cache: per field an array of {@code length * width} elements of the
 * field's dtype (row-major per example; the Java types are {@link FieldArrays}') and a presence
 * bitset.
 *
 * <p>Presence, not the value, says whether an example is known: a missing example holds {@link
 * #SENTINEL} ({@code -inf}; the lowest integer for integer dtypes), while a present one may hold a
 * real {@code -inf}. Blocks form a state-based CRDT under {@link #merge} ({@link BlockMerge}):
 * element-wise {@link Math#max} where both sides hold an example, the holder's values where one
 * does, presence OR. Readers on other threads find a cache's blocks in {@link PublishedBlocks}, and
 * a lookup reads them through {@link BlockGather}.
 *
 * <p>A block is mutable and not thread-safe; to share one across threads, publish a {@link #copy()}
 * that is never mutated.
 */
public final class Block implements RangeData {
  /** What a missing example's elements hold. */
  public static final float SENTINEL = Float.NEGATIVE_INFINITY;

  private final CacheSpec spec;
  private final int range;
  private final long start;
  private final int length;

  /** Per field, {@code length * width} elements; read directly by the merge and the gather. */
  final Object[] values;

  /** Per field, its dtype. */
  final DType[] dtypes;

  /**
   * {@code values[0]} and {@code values[1]} where they are F32 (else null): the lookup's loop saves
   * a load with them.
   */
  final float[] field0;

  final float[] field1;

  /** Per field, its width. */
  final int[] widths;

  final Presence presence;

  private Block(CacheSpec spec, int range, Object[] values, Presence presence) {
    this.spec = spec;
    this.range = range;
    this.start = spec.rangeStart(range);
    this.length = spec.rangeLength(range);
    this.widths = spec.fields().stream().mapToInt(FieldSpec::width).toArray();
    this.values = values;
    this.dtypes = new DType[values.length];
    for (int f = 0; f < values.length; f++) {
      dtypes[f] = spec.fields().get(f).dtype();
    }
    this.field0 = values[0] instanceof float[] v ? v : null;
    this.field1 = values.length > 1 && values[1] instanceof float[] v ? v : null;
    this.presence = presence;
  }

  /** A block of range {@code range} of {@code spec} with no example present. */
  public static Block empty(CacheSpec spec, int range) {
    if (spec == null) {
      throw new IllegalArgumentException("cache spec missing");
    }
    spec.checkFixedShape("a block");
    int length = spec.rangeLength(range);
    Object[] values = new Object[spec.fields().size()];
    for (int f = 0; f < values.length; f++) {
      FieldSpec field = spec.fields().get(f);
      values[f] = FieldArrays.sentinels(field.dtype(), length * field.width());
    }
    return new Block(spec, range, values, Presence.none(length));
  }

  /**
   * A block built from raw arrays; the arrays are copied. Present examples must hold no NaN and
   * missing ones exactly the sentinel of their dtype.
   *
   * @param values per field, {@code length * width} elements of its dtype's Java type
   * @param presence bitset words, bit {@code i % 64} of word {@code i / 64} for example {@code
   *     start + i}; bits at or beyond the range length must be clear
   */
  public static Block of(CacheSpec spec, int range, Object[] values, long[] presence) {
    Object[] copies = values == null ? null : new Object[values.length];
    for (int f = 0; copies != null && f < copies.length; f++) {
      copies[f] = values[f] == null ? null : FieldArrays.copyOf(values[f]);
    }
    return adopt(spec, range, copies, presence == null ? null : presence.clone());
  }

  /**
   * Like {@link #of}, but the block takes the arrays over without copying them, as a decoder that
   * has just filled them can let it; the caller must not touch them afterwards.
   */
  public static Block adopt(CacheSpec spec, int range, Object[] values, long[] presence) {
    if (spec == null) {
      throw new IllegalArgumentException("cache spec missing");
    }
    spec.checkFixedShape("a block");
    long start = spec.rangeStart(range);
    int length = spec.rangeLength(range);
    BlockChecks.checkRaw(spec, range, start, length, values, presence);
    return new Block(spec, range, values, new Presence(presence));
  }

  /** An independent copy of this block. */
  public Block copy() {
    Object[] copies = new Object[values.length];
    for (int f = 0; f < values.length; f++) {
      copies[f] = FieldArrays.copyOf(values[f]);
    }
    return new Block(spec, range, copies, presence.copy());
  }

  /** The spec of the cache this block belongs to. */
  public CacheSpec spec() {
    return spec;
  }

  /** The range index. */
  public int range() {
    return range;
  }

  /** The first example index of the range. */
  public long start() {
    return start;
  }

  /** The number of examples in the range. */
  public int length() {
    return length;
  }

  /**
   * Stores all fields of one example; if it is already present, the values are merged with MAX as
   * in {@link #merge}. Nothing changes when an argument is rejected. A runner computes floats: a
   * field of F16 or BF16 stores the nearest (ties to even), one of I32 or I64 takes integers only.
   *
   * @param perFieldValues one array per field in spec order, each of the field's width
   */
  public void put(long index, float[][] perFieldValues) {
    int i = local(index);
    BlockChecks.checkRow(spec, index, perFieldValues);
    boolean wasPresent = presence.has(i);
    for (int f = 0; f < values.length; f++) {
      float[] v = perFieldValues[f];
      FieldArrays.putFloats(dtypes[f], values[f], i * v.length, v, wasPresent);
    }
    presence.add(i);
  }

  /** Whether example {@code index} has a value. */
  public boolean isPresent(long index) {
    return presence.has(local(index));
  }

  /**
   * Copies the width elements of field {@code field} of example {@code index} into {@code dst} (an
   * array of the field's dtype) at {@code dstOff}; throws if the example is not present, so a
   * sentinel is never handed out.
   */
  public void copyValues(int field, long index, Object dst, int dstOff) {
    int i = local(index);
    checkField(field);
    if (!presence.has(i)) {
      throw BlockChecks.notPresent(this, index);
    }
    int width = widths[field];
    System.arraycopy(values[field], i * width, dst, dstOff, width);
  }

  /**
   * Copies every field of example {@code index} into {@code out[f]} at {@code position * width} and
   * returns true when it is present; returns false, copying nothing, when it is not. No allocation,
   * no exception for a missing example. A batch of indices across the blocks of a cache is {@link
   * BlockGather#gather}.
   */
  public boolean gather(long index, Object[] out, int position) {
    int i = local(index);
    if (!holds(i)) {
      return false;
    }
    BlockGather.copyRow(this, i, out, position);
    return true;
  }

  /** Whether the range's example {@code i} is present; a complete block skips the bitset. */
  boolean holds(int i) {
    return presence.count() == length || presence.has(i);
  }

  /** Number of present examples. */
  public int presentCount() {
    return presence.count();
  }

  /** Whether every example of the range is present. */
  public boolean isComplete() {
    return presence.count() == length;
  }

  /** A new block holding the merge of this one and {@code other}; neither is changed. */
  public Block merge(Block other) {
    return BlockMerge.merged(this, other);
  }

  /** Merges {@code other} into this block; {@code other} is not changed. */
  public void mergeInPlace(Block other) {
    BlockMerge.into(this, other);
  }

  /**
   * A copy of the presence bitset: bit {@code i % 64} of word {@code i / 64} for {@code start+i}.
   */
  public long[] presenceWords() {
    return presence.toWords();
  }

  /**
   * Copies {@code count} stored elements of field {@code field}, starting at element {@code from}
   * of the range, including the sentinels of missing examples; for codecs, which store the presence
   * alongside.
   */
  public void copyRawValues(int field, int from, Object dst, int dstOff, int count) {
    checkField(field);
    System.arraycopy(values[field], from, dst, dstOff, count);
  }

  /**
   * The element array of field {@code field} itself, not a copy: for the hot tier, which recycles
   * the arrays of a block it has evicted into a new block. Nobody may change it while the block can
   * still be read; the tier's reader protocol says when that is.
   */
  public Object elementArray(int field) {
    checkField(field);
    return values[field];
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Block b)
        || b.range != range
        || !b.spec.equals(spec)
        || !b.presence.equals(presence)) {
      return false;
    }
    for (int f = 0; f < values.length; f++) {
      // float arrays compare by floatToIntBits, so -0.0 and 0.0 differ.
      if (!FieldArrays.equal(values[f], b.values[f])) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = spec.hashCode() * 31 + range;
    h = h * 31 + presence.hashCode();
    for (Object v : values) {
      h = h * 31 + FieldArrays.hash(v);
    }
    return h;
  }

  @Override
  public String toString() {
    return String.format(
        "Block[cache=%s, range=%d, start=%d, length=%d, present=%d]",
        spec.name(), range, start, length, presence.count());
  }

  private int local(long index) {
    if (index < start || index >= start + length) {
      throw BlockChecks.outsideRange(this, index);
    }
    return (int) (index - start);
  }

  private void checkField(int field) {
    if (field < 0 || field >= values.length) {
      throw BlockChecks.noSuchField(this, field);
    }
  }
}
