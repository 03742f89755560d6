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
    return new BlockKey(RangeId.of(cacheId, range).toString());
  }

  /** The range a block key names. */
  public static RangeId rangeOf(Key<?> key) {
    return RangeId.parse(key.id());
  }
}
