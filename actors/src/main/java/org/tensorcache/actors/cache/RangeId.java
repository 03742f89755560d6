package org.tensorcache.actors.cache;

/**
 * One range of one cache, written {@code <cache id>#<range>}: the shard entity id, the Distributed
 * Data key of its block (and, with a suffix, of its presence) and what logs name.
 */
public record RangeId(String cacheId, int range) {
  /** Separates the cache id from the range; a cache id may hold it, a range never does. */
  private static final char SEPARATOR = '#';

  /** The range {@code range} of cache {@code cacheId}. */
  public static RangeId of(String cacheId, int range) {
    return new RangeId(cacheId, range);
  }

  /** Reads {@code <cache id>#<range>}, or an error naming the text and the expected form. */
  public static RangeId parse(String text) {
    int at = text.lastIndexOf(SEPARATOR);
    try {
      if (at > 0) {
        return new RangeId(text.substring(0, at), Integer.parseInt(text.substring(at + 1)));
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "range id '" + text + "', expected <cache id>" + SEPARATOR + "<range number>");
  }

  @Override
  public String toString() {
    return cacheId + SEPARATOR + range;
  }
}
