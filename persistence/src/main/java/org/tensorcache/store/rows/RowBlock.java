package org.tensorcache.store.rows;

import java.util.Arrays;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The values of one range of a per-token cache: per example its token count and its row, the bytes
 * {@link RowCodec} makes of its fields, or nothing where the example is not known yet. What {@code
 * Block} is to a cache of fixed-shape fields.
 *
 * <p>Rows form a state-based CRDT under {@link #merge}: an example held by one side is taken from
 * it; where both hold one, the larger by token count, then by unsigned bytes, is kept. Runners are
 * deterministic, so both sides hold the same row; the order only makes replicas agree if one is
 * not. Mutable and not thread-safe, as a block is.
 */
public final class RowBlock implements org.tensorcache.store.block.RangeData {
  private final CacheSpec spec;
  private final int range;
  private final long start;
  private final byte[][] rows;
  private final int[] tokens;
  private int present;
  private long bytes;
  private long totalTokens;

  private RowBlock(CacheSpec spec, int range) {
    spec.checkPerToken("a range of rows");
    this.spec = spec;
    this.range = range;
    this.start = spec.rangeStart(range);
    int length = spec.rangeLength(range);
    this.rows = new byte[length][];
    this.tokens = new int[length];
  }

  /** Range {@code range} of the per-token cache {@code spec}, with no example present. */
  public static RowBlock empty(CacheSpec spec, int range) {
    return new RowBlock(spec, range);
  }

  /** The spec of the cache these rows belong to. */
  public CacheSpec spec() {
    return spec;
  }

  /** The range these rows are. */
  public int range() {
    return range;
  }

  /** The range's first example index. */
  public long start() {
    return start;
  }

  /** The range's number of examples. */
  public int length() {
    return rows.length;
  }

  /** Examples present. */
  public int presentCount() {
    return present;
  }

  /** Whether every example of the range is present. */
  public boolean isComplete() {
    return present == rows.length;
  }

  @Override
  public long[] presenceWords() {
    long[] words = new long[(rows.length + 63) / 64];
    for (int i = 0; i < rows.length; i++) {
      if (rows[i] != null) {
        words[i >>> 6] |= 1L << i;
      }
    }
    return words;
  }

  /** Bytes of the present rows, together. */
  public long rowBytes() {
    return bytes;
  }

  /** Tokens of the present rows, together. */
  public long totalTokens() {
    return totalTokens;
  }

  /** Whether example {@code index} (a cache index) is present. */
  public boolean isPresent(long index) {
    return rows[offset(index)] != null;
  }

  /** The tokens of example {@code index}, 0 where it is not present. */
  public int tokens(long index) {
    return tokens[offset(index)];
  }

  /**
   * The row of example {@code index}, or null where it is not present; the array is this range's
   * own and must not be changed.
   */
  public byte[] row(long index) {
    return rows[offset(index)];
  }

  /**
   * Sets example {@code index} to the row {@code row} of {@code tokens} tokens, or keeps the row it
   * holds where that one is larger (see {@link #merge}); the array is taken over, not copied.
   */
  public void put(long index, int tokens, byte[] row) {
    int i = offset(index);
    if (tokens < 1) {
      throw new IllegalArgumentException(
          "example " + index + " of " + tokens + " tokens, expected at least 1");
    }
    if (row == null) {
      throw new IllegalArgumentException("example " + index + " has no row");
    }
    if (rows[i] != null) {
      if (compare(tokens, row, this.tokens[i], rows[i]) <= 0) {
        return;
      }
      present--;
      bytes -= rows[i].length;
      totalTokens -= this.tokens[i];
    }
    rows[i] = row;
    this.tokens[i] = tokens;
    present++;
    bytes += row.length;
    totalTokens += tokens;
  }

  /** Merges {@code other}, rows of the same range of the same cache, into these. */
  public void merge(RowBlock other) {
    if (!other.spec.equals(spec) || other.range != range) {
      throw new IllegalArgumentException(
          "cannot merge range "
              + other.range
              + " of cache '"
              + other.spec.name()
              + "' into range "
              + range
              + " of cache '"
              + spec.name()
              + "', expected the same cache and range");
    }
    for (int i = 0; i < rows.length; i++) {
      if (other.rows[i] != null) {
        put(start + i, other.tokens[i], other.rows[i]);
      }
    }
  }

  /** An independent copy (rows are shared: they are never changed). */
  public RowBlock copy() {
    RowBlock c = new RowBlock(spec, range);
    c.merge(this);
    return c;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof RowBlock r) || !r.spec.equals(spec) || r.range != range) {
      return false;
    }
    return Arrays.equals(tokens, r.tokens) && Arrays.deepEquals(rows, r.rows);
  }

  @Override
  public int hashCode() {
    return range * 31 + Arrays.hashCode(tokens);
  }

  @Override
  public String toString() {
    return "rows of range "
        + range
        + " of '"
        + spec.name()
        + "': "
        + present
        + "/"
        + rows.length
        + " present, "
        + totalTokens
        + " tokens, "
        + bytes
        + " bytes";
  }

  private static int compare(int tokensA, byte[] a, int tokensB, byte[] b) {
    int c = Integer.compare(tokensA, tokensB);
    return c != 0 ? c : Arrays.compareUnsigned(a, b);
  }

  private int offset(long index) {
    long i = index - start;
    if (i < 0 || i >= rows.length) {
      throw new IndexOutOfBoundsException(
          "index "
              + index
              + " is not in range "
              + range
              + " ["
              + start
              + ", "
              + (start + rows.length)
              + ") of cache '"
              + spec.name()
              + "'");
    }
    return (int) i;
  }
}
