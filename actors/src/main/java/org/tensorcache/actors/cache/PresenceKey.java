package org.tensorcache.actors.cache;

import org.apache.pekko.cluster.ddata.Key;

/** The Distributed Data key of one range's presence: {@code <cache id>#<range>#present}. */
public final class PresenceKey extends Key<PresenceData> {
  private static final long serialVersionUID = 1L;
  private static final String SUFFIX = "#present";

  private PresenceKey(String id) {
    super(id);
  }

  /** The key of {@code range} of cache {@code cacheId}. */
  public static PresenceKey of(String cacheId, int range) {
    return new PresenceKey(RangeId.of(cacheId, range) + SUFFIX);
  }

  /** The range a presence key names. */
  public static RangeId rangeOf(Key<?> key) {
    String id = key.id();
    if (!id.endsWith(SUFFIX)) {
      throw new IllegalArgumentException(
          "presence key '" + id + "', expected <cache id>#<range>" + SUFFIX);
    }
    return RangeId.parse(id.substring(0, id.length() - SUFFIX.length()));
  }
}
