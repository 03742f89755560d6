package org.tensorcache.store.spec;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.tensorcache.fields.FieldSpec;

/**
 * Describes one cache: its name, the number of examples {@code n}, the per-example fields and the
 * range size that splits {@code [0, n)} into the units of ownership and persistence.
 *
 * @param name cache name, {@code [a-z][a-z0-9_-]{0,63}}; part of the cache id and of file names
 * @param n number of examples, indices {@code [0, n)}
 * @param fields the per-example tensors, at least one, names unique
 *     <p>The fields are either all of one shape per example (kept in blocks, merged element-wise)
 *     or all per-token (kept as one coded row per example, see {@link TokenCoding}); a cache does
 *     not mix the two.
 * @param rangeSize examples per range, {@code 1..2^24}; the last range may be shorter
 * @param tokenCoding how per-token fields are kept; {@link TokenCoding#PLAIN} for fixed-shape ones
 */
public record CacheSpec(
    String name, long n, List<FieldSpec> fields, int rangeSize, TokenCoding tokenCoding) {
  /** The largest accepted range size, 2^24. */
  public static final int MAX_RANGE_SIZE = 1 << 24;

  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,63}");

  /** A cache whose per-token fields, if any, are kept as they are. */
  public CacheSpec(String name, long n, List<FieldSpec> fields, int rangeSize) {
    this(name, n, fields, rangeSize, TokenCoding.PLAIN);
  }

  /** A teacher's top-K cache: the fields of {@code coding}, coded by it. */
  public static CacheSpec teacher(String name, long n, int rangeSize, TokenCoding.TopK coding) {
    return new CacheSpec(name, n, coding.fields(), rangeSize, coding);
  }

  /** Validates every component, naming the bad value and what was expected. */
  public CacheSpec {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "cache name '" + name + "' invalid, expected [a-z][a-z0-9_-]{0,63}");
    }
    if (rangeSize < 1 || rangeSize > MAX_RANGE_SIZE) {
      throw new IllegalArgumentException(
          "range size " + rangeSize + " invalid, expected 1..2^24 for cache '" + name + "'");
    }
    if (n < 1) {
      throw new IllegalArgumentException(
          "n " + n + " invalid, expected at least 1 example for cache '" + name + "'");
    }
    if ((n - 1) / rangeSize + 1 > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "n "
              + n
              + " with range size "
              + rangeSize
              + " gives more than 2^31-1 ranges for cache '"
              + name
              + "', expected a larger range size");
    }
    if (fields == null || fields.isEmpty()) {
      throw new IllegalArgumentException(
          "cache '" + name + "' has no fields, expected at least one");
    }
    fields = List.copyOf(fields);
    Set<String> seen = new HashSet<>();
    for (FieldSpec f : fields) {
      if (!seen.add(f.name())) {
        throw new IllegalArgumentException(
            "field '"
                + f.name()
                + "' appears twice in cache '"
                + name
                + "', expected unique names");
      }
      if ((long) f.width() * rangeSize > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException(
            "field '"
                + f.name()
                + "' of width "
                + f.width()
                + " times range size "
                + rangeSize
                + " exceeds 2^31-9 elements per block in cache '"
                + name
                + "', expected a smaller range size");
      }
    }
    checkKinds(name, fields, tokenCoding);
  }

  private static void checkKinds(String name, List<FieldSpec> fields, TokenCoding coding) {
    if (coding == null) {
      throw new IllegalArgumentException("cache '" + name + "' has no token coding");
    }
    FieldSpec first = fields.get(0);
    for (FieldSpec f : fields) {
      if (f.perToken() != first.perToken()) {
        FieldSpec perToken = f.perToken() ? f : first;
        FieldSpec fixed = f.perToken() ? first : f;
        throw new IllegalArgumentException(
            "cache '"
                + name
                + "' mixes per-token field '"
                + perToken.name()
                + "' with fixed-shape field '"
                + fixed.name()
                + "', expected fields of one kind");
      }
    }
    if (first.perToken()) {
      coding.check(name, fields);
    } else if (!(coding instanceof TokenCoding.Plain)) {
      throw new IllegalArgumentException(
          "cache '" + name + "' has no per-token fields, so no token coding (" + coding + ")");
    }
  }

  /** Whether the fields are per-token: one coded row per example rather than a block. */
  public boolean perToken() {
    return fields.get(0).perToken();
  }

  /** Throws unless the fields are per-token, naming {@code what} takes only those. */
  public void checkPerToken(String what) {
    if (!perToken()) {
      throw new IllegalArgumentException(
          what
              + " holds per-token fields only, and cache '"
              + name
              + "' has one shape per example ("
              + fields.get(0)
              + ")");
    }
  }

  /**
   * Throws unless the fields are of one shape per example, naming {@code what} could not take
   * per-token ones.
   */
  public void checkFixedShape(String what) {
    if (perToken()) {
      throw new IllegalArgumentException(
          what
              + " holds fixed-shape fields only, and cache '"
              + name
              + "' is per-token ("
              + fields.get(0)
              + "); expected a cache of one shape per example");
    }
  }

  /** Number of ranges, the last one possibly shorter than {@link #rangeSize()}. */
  public int rangeCount() {
    return (int) ((n - 1) / rangeSize + 1);
  }

  /** First example index of range {@code r}. */
  public long rangeStart(int r) {
    checkRange(r);
    return (long) r * rangeSize;
  }

  /** Number of examples in range {@code r}. */
  public int rangeLength(int r) {
    checkRange(r);
    return (int) Math.min(rangeSize, n - (long) r * rangeSize);
  }

  /** The range that holds example {@code index}. */
  public int rangeOf(long index) {
    if (index < 0 || index >= n) {
      throw new IndexOutOfBoundsException(
          "index " + index + " out of range [0, " + n + ") for cache '" + name + "'");
    }
    return (int) (index / rangeSize);
  }

  /** Position of the field called {@code fieldName} in {@link #fields()}. */
  public int fieldIndex(String fieldName) {
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).name().equals(fieldName)) {
        return i;
      }
    }
    List<String> names = new ArrayList<>(fields.size());
    for (FieldSpec f : fields) {
      names.add(f.name());
    }
    throw new IllegalArgumentException(
        "unknown field '" + fieldName + "' in cache '" + name + "', expected one of " + names);
  }

  /** The field called {@code fieldName}. */
  public FieldSpec field(String fieldName) {
    return fields.get(fieldIndex(fieldName));
  }

  private void checkRange(int r) {
    if (r < 0 || r >= rangeCount()) {
      throw new IndexOutOfBoundsException(
          "range " + r + " out of range [0, " + rangeCount() + ") for cache '" + name + "'");
    }
  }
}
