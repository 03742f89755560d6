package org.tensorcache.actors.coordinator;

import java.util.Arrays;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The coordinator's manifest, its durable state: per cache whether a fill was asked for and which
 * ranges have a persisted segment. Immutable; each event gives a new state.
 */
public record CoordinatorState(CacheProgress[] caches) implements KryoSerializable {
  /** No cache known yet. */
  public static CoordinatorState empty() {
    return new CoordinatorState(new CacheProgress[0]);
  }

  /** One cache's progress; {@code persisted} is a bitset of range numbers. */
  public record CacheProgress(String cacheId, boolean filling, long[] persisted)
      implements KryoSerializable {
    /** Whether {@code range} has a persisted segment. */
    public boolean isPersisted(int range) {
      int w = range >>> 6;
      return w < persisted.length && (persisted[w] & (1L << range)) != 0;
    }

    /** Number of persisted ranges. */
    public int persistedCount() {
      int c = 0;
      for (long w : persisted) {
        c += Long.bitCount(w);
      }
      return c;
    }

    CacheProgress withPersisted(int range, boolean value) {
      long[] bits = Arrays.copyOf(persisted, Math.max(persisted.length, (range >>> 6) + 1));
      bits[range >>> 6] =
          value ? bits[range >>> 6] | (1L << range) : bits[range >>> 6] & ~(1L << range);
      return new CacheProgress(cacheId, filling, bits);
    }
  }

  /** Something that happened to the coordinator's state. */
  public interface Event extends KryoSerializable {}

  /** A fill of the cache was asked for. */
  public record FillRequested(String cacheId) implements Event {}

  /** The range's segment was written and fsynced. */
  public record RangePersisted(String cacheId, int range) implements Event {}

  /** The range's segment was missing or rejected at restore; it will be computed again. */
  public record RangeLost(String cacheId, int range, String reason) implements Event {}

  /** The progress of {@code cacheId}, empty when unknown. */
  public CacheProgress progress(String cacheId) {
    for (CacheProgress p : caches) {
      if (p.cacheId().equals(cacheId)) {
        return p;
      }
    }
    return new CacheProgress(cacheId, false, new long[0]);
  }

  /** The state after {@code event}. */
  public CoordinatorState apply(Event event) {
    if (event instanceof FillRequested e) {
      CacheProgress p = progress(e.cacheId());
      return with(new CacheProgress(p.cacheId(), true, p.persisted()));
    }
    if (event instanceof RangePersisted e) {
      return with(progress(e.cacheId()).withPersisted(e.range(), true));
    }
    if (event instanceof RangeLost e) {
      return with(progress(e.cacheId()).withPersisted(e.range(), false));
    }
    throw new IllegalArgumentException("unknown event " + event);
  }

  private CoordinatorState with(CacheProgress updated) {
    CacheProgress[] next = Arrays.copyOf(caches, caches.length + 1);
    for (int i = 0; i < caches.length; i++) {
      if (caches[i].cacheId().equals(updated.cacheId())) {
        next = caches.clone();
        next[i] = updated;
        return new CoordinatorState(next);
      }
    }
    next[caches.length] = updated;
    return new CoordinatorState(next);
  }
}
