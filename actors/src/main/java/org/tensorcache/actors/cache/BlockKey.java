package org.tensorcache.actors.cache;

import org.apache.pekko.cluster.ddata.Key;

/** The Distributed Data key of one range of one cache: {@code <cache id>#<range>}. */
public final class BlockKey extends Key<BlockData> {
  private static final long serialVersionUID = 1L;

  private BlockKey(String id) {
    super(id);
  }

  /** The key of {@code range} of cache {@code cacheId}. */
  public static BlockKey of(String cacheId, int range) {
    return new BlockKey(cacheId + "#" + range);
  }

  /** The range number in the key's id. */
  public static int rangeOf(Key<?> key) {
    String id = key.id();
    return Integer.parseInt(id.substring(id.lastIndexOf('#') + 1));
  }

  /** The cache id in the key's id. */
  public static String cacheOf(Key<?> key) {
    String id = key.id();
    return id.substring(0, id.lastIndexOf('#'));
  }
}
