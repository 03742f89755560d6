package org.tensorcache.actors.cache;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.BlockGather;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.HotTier;
import org.tensorcache.store.tier.MappedSegment;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * The read side of a cache replicated by reference on this node: the hot tier (blocks in memory,
 * read on the caller's thread with the check that makes their reuse safe), then the warm tier (the
 * range's segment file, memory-mapped). What neither holds is left to the cold path, the range's
 * shard. A range read warm is promoted to hot in the background; a lookup never waits for that.
 */
public final class TieredView {
  private static final Logger log = LoggerFactory.getLogger(TieredView.class);

  /**
   * Promotions a lookup starts only while fewer than this many run: random lookups over a cache
   * larger than the budget would otherwise copy a whole range in for every row they read, and evict
   * as fast, while a trainer's ranges come in ahead of time by prefetch anyway.
   */
  private static final int MAX_PROMOTIONS_ON_USE = 2;

  private final CacheRegistry registry;
  private final HotTier hot;
  private final Executor io;
  private final Map<String, WarmSegments> warm = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Boolean>> loading = new ConcurrentHashMap<>();

  /** The tiers of the caches in {@code registry}: {@code hot}, then segments read on {@code io}. */
  TieredView(HotTier hot, Executor io, CacheRegistry registry) {
    this.registry = registry;
    this.hot = hot;
    this.io = io;
  }

  /**
   * Copies what the hot and warm tiers hold of {@code indices} into {@code out} and returns the
   * positions neither holds; counts the hits of each tier ({@code count}) and promotes the ranges
   * read warm.
   */
  public int[] gather(String cacheId, long[] indices, Object[] out, boolean count) {
    CacheRegistry.Registered e = registry.get(cacheId);
    CacheSpec spec = e.definition().spec();
    int[] missing = BlockGather.gatherChecked(spec, e.blocks(), cacheId, indices, out);
    touchHits(cacheId, spec, indices, missing);
    TierStats stats = hot.stats(cacheId);
    if (count) {
      stats.hit(Tier.HOT, indices.length - missing.length);
    }
    if (missing.length == 0) {
      return missing;
    }
    WarmSegments segments = warm.computeIfAbsent(cacheId, id -> new WarmSegments(e.definition()));
    int[] still = new int[missing.length];
    int left = 0;
    int lastPromoted = -1;
    for (int m : missing) {
      int range = spec.rangeOf(indices[m]);
      MappedSegment segment = segments.segment(range, false);
      if (segment == null || !segment.gather(indices[m], out, m)) {
        still[left++] = m;
      } else if (range != lastPromoted && loading.size() < MAX_PROMOTIONS_ON_USE) {
        promote(cacheId, range);
        lastPromoted = range;
      }
    }
    if (count) {
      stats.hit(Tier.WARM, missing.length - left);
    }
    return Arrays.copyOf(still, left);
  }

  /**
   * Brings a range's segment into the hot tier in the background: completes with true once it is
   * hot, false when it has no readable segment or the tier cannot take it (all else pinned).
   */
  public CompletableFuture<Boolean> promote(String cacheId, int range) {
    if (hot.isHot(cacheId, range)) {
      return CompletableFuture.completedFuture(true);
    }
    String key = cacheId + "#" + range;
    CompletableFuture<Boolean> fresh = new CompletableFuture<>();
    CompletableFuture<Boolean> running = loading.putIfAbsent(key, fresh);
    if (running != null) {
      return running;
    }
    io.execute(
        () -> {
          try {
            WarmSegments segments =
                warm.computeIfAbsent(cacheId, id -> new WarmSegments(registry.definition(id)));
            MappedSegment segment = segments.segment(range, true);
            fresh.complete(segment != null && admit(cacheId, segment.toBlock(hot.pool())));
          } catch (RuntimeException ex) {
            log.warn("range {} of {} not promoted: {}", range, cacheId, ex.toString());
            fresh.complete(false);
          } finally {
            loading.remove(key, fresh);
          }
        });
    return fresh;
  }

  /** Makes {@code block} (complete, never changed afterwards) the hot block of its range. */
  public boolean admit(String cacheId, Block block) {
    return hot.isHot(cacheId, block.range()) || hot.admit(cacheId, block);
  }

  /** The tier's statistics for {@code cacheId}. */
  public TierStats stats(String cacheId) {
    return hot.stats(cacheId);
  }

  /** Marks the ranges of the positions served hot as used, for the eviction policy. */
  private void touchHits(String cacheId, CacheSpec spec, long[] indices, int[] missing) {
    int next = 0;
    int last = -1;
    for (int i = 0; i < indices.length; i++) {
      if (next < missing.length && missing[next] == i) {
        next++;
        continue;
      }
      int range = spec.rangeOf(indices[i]);
      if (range != last) {
        hot.touch(cacheId, range);
        last = range;
      }
    }
  }

  /**
   * The mapped segment files of one cache, opened on first use; absent ones looked for again. A
   * segment in object storage is mapped from its verified local copy: a lookup never waits for a
   * download, it starts one in the background (or the promotion on the I/O dispatcher does it).
   */
  private final class WarmSegments {
    /** How long a range without a segment file is not looked for again. */
    private static final long RECHECK_NANOS = 1_000_000_000L;

    private final CacheDefinition cache;
    private final MappedSegment[] open;
    private final long[] absentUntil;

    WarmSegments(CacheDefinition cache) {
      this.cache = cache;
      this.open = new MappedSegment[cache.spec().rangeCount()];
      this.absentUntil = new long[open.length];
    }

    /**
     * The range's mapped segment, or null while it has none here (or a rejected one); {@code
     * mayDownload}: the caller runs on the I/O dispatcher and may wait for object storage.
     */
    synchronized MappedSegment segment(int range, boolean mayDownload) {
      MappedSegment s = open[range];
      if (s != null || System.nanoTime() - absentUntil[range] < 0) {
        return s;
      }
      Segments<Block> segments = cache.segments();
      try {
        Optional<Path> file =
            mayDownload ? segments.localCopy(range) : segments.presentLocally(range);
        if (file.isEmpty()) {
          absentUntil[range] = System.nanoTime() + RECHECK_NANOS;
          if (!mayDownload && segments.isRemote()) {
            io.execute(() -> fetch(range));
          }
          return null;
        }
        s = MappedSegment.open(file.get(), cache.spec(), cache.fingerprint(), range);
        open[range] = s;
      } catch (java.nio.file.NoSuchFileException missing) {
        absentUntil[range] = System.nanoTime() + RECHECK_NANOS;
      } catch (IOException | RuntimeException rejected) {
        // a truncated or corrupt file is never served: the cold path computes the range again
        log.warn(
            "segment of range {} of {} not used: {}", range, cache.cacheId(), rejected.toString());
        absentUntil[range] = System.nanoTime() + RECHECK_NANOS;
      }
      return s;
    }

    /** Downloads a range's object into its verified local copy, for the next lookup to map. */
    private void fetch(int range) {
      try {
        if (cache.segments().localCopy(range).isPresent()) {
          synchronized (this) {
            absentUntil[range] = 0; // look again at the next lookup
          }
        }
      } catch (IOException | RuntimeException e) {
        log.warn("segment of range {} of {} not fetched: {}", range, cache.cacheId(), e.toString());
      }
    }
  }
}
