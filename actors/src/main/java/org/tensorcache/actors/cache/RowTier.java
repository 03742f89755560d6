package org.tensorcache.actors.cache;

import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * The memory of a node for per-token caches: complete ranges of rows, read from their verified
 * segments, kept while they fit the memory budget (in bytes of rows, whatever their sizes) and
 * dropped least recently used first. What the hot tier is to blocks; rows are never changed once a
 * range is complete, so a reader takes a kept range without a lock on its rows.
 */
public final class RowTier {
  private record Key(String cacheId, int range) {}

  private final long budgetBytes;
  private final LinkedHashMap<Key, RowBlock> kept = new LinkedHashMap<>(16, 0.75f, true);
  private final Map<String, TierStats> stats = new ConcurrentHashMap<>();
  private long bytes;

  /** A tier holding at most {@code budgetBytes} of rows. */
  public RowTier(long budgetBytes) {
    this.budgetBytes = budgetBytes;
  }

  /** The tier statistics of {@code cacheId}: hot rows from memory, warm from a segment read. */
  public TierStats stats(String cacheId) {
    return stats.computeIfAbsent(cacheId, id -> new TierStats());
  }

  /** Bytes of rows held now. */
  public synchronized long bytes() {
    return bytes;
  }

  /** The kept rows of a range, or null. */
  public synchronized RowBlock get(String cacheId, int range) {
    return kept.get(new Key(cacheId, range));
  }

  /**
   * The rows of range {@code range}, kept or read from its segment (checked, then kept), or null
   * when the range has no segment yet.
   *
   * @throws IOException when the segment cannot be read or fails a check
   */
  public RowBlock load(CacheDefinition cache, int range) throws IOException {
    RowBlock rows = get(cache.cacheId(), range);
    if (rows != null) {
      return rows;
    }
    rows = cache.tokens().segments().read(range).orElse(null);
    if (rows != null) {
      keep(cache.cacheId(), rows);
    }
    return rows;
  }

  /**
   * Keeps the complete rows of a range, dropping the least recently used ranges while over the
   * budget; a range larger than the whole budget is not kept.
   */
  public synchronized void keep(String cacheId, RowBlock rows) {
    if (!rows.isComplete() || rows.rowBytes() > budgetBytes) {
      return;
    }
    RowBlock before = kept.put(new Key(cacheId, rows.range()), rows);
    bytes += rows.rowBytes() - (before == null ? 0 : before.rowBytes());
    Iterator<Map.Entry<Key, RowBlock>> oldest = kept.entrySet().iterator();
    while (bytes > budgetBytes && oldest.hasNext()) {
      Map.Entry<Key, RowBlock> e = oldest.next();
      if (e.getValue() != rows) {
        bytes -= e.getValue().rowBytes();
        oldest.remove();
      }
    }
  }

  /** Counts {@code n} rows of {@code cacheId} served from {@code tier}. */
  public void served(String cacheId, Tier tier, long n) {
    if (n > 0) {
      stats(cacheId).hit(tier, n);
    }
  }
}
