package org.tensorcache.actors.cache;

import org.apache.pekko.cluster.ddata.Key;

/** The Distributed Data key of one range's presence: {@code <cache id>#<range>#present}. */
public final class PresenceKey extends Key<PresenceData> {
  private static final long serialVersionUID = 1L;

  private PresenceKey(String id) {
    super(id);
  }

  /** The key of {@code range} of cache {@code cacheId}. */
  public static PresenceKey of(String cacheId, int range) {
    return new PresenceKey(cacheId + "#" + range + "#present");
  }

  /** The range number in a key's id. */
  public static int rangeOf(Key<?> key) {
    String[] parts = key.id().split("#");
    return Integer.parseInt(parts[parts.length - 2]);
  }

  /** The cache id in a key's id. */
  public static String cacheOf(Key<?> key) {
    String id = key.id();
    String withoutSuffix = id.substring(0, id.lastIndexOf('#'));
    return withoutSuffix.substring(0, withoutSuffix.lastIndexOf('#'));
  }
}
