package org.tensorcache.actors.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntPredicate;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.RangeData;
import org.tensorcache.store.rows.RowBlock;

/**
 * A cache's segments read and written off the actor threads, on the I/O dispatcher, wherever they
 * are kept ({@link CacheDefinition#segments}: a local directory or object storage).
 */
public final class SegmentIo {
  private SegmentIo() {}

  /**
   * The ranges to restore at start: those recorded as persisted and those with a segment (leftover
   * temporary files are deleted on the way). Object storage is listed, so a node with an empty disk
   * finds every segment there.
   */
  public static SortedSet<Integer> toRestore(CacheDefinition cache, IntPredicate recorded) {
    SortedSet<Integer> ranges;
    try {
      cache.store().deleteTemporaries();
      ranges = new TreeSet<>(cache.store().persistedRanges());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the segments of " + cache.cacheId(), e);
    }
    for (int r = 0; r < cache.spec().rangeCount(); r++) {
      if (recorded.test(r)) {
        ranges.add(r);
      }
    }
    return ranges;
  }

  /**
   * The verified block of a range's segment; completes with null when there is no segment and
   * exceptionally (with the specific rejection) when it is truncated, corrupt or foreign. The read
   * and its checks are timed into {@code metrics}.
   */
  public static CompletableFuture<Block> read(
      CacheDefinition cache, int range, Executor io, NodeMetrics metrics) {
    return CompletableFuture.supplyAsync(
        () -> {
          long started = System.nanoTime();
          boolean found = true; // a rejected segment was read too; a missing one was not
          try {
            Block block = cache.segments().read(range).orElse(null);
            found = block != null;
            return block;
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          } finally {
            if (found) {
              metrics.segmentRead(System.nanoTime() - started);
            }
          }
        },
        io);
  }

  /**
   * Like {@link #read}, whatever the cache's values are: a block, or for a per-token cache its rows
   * ({@link CacheDefinition#tokens}).
   */
  public static CompletableFuture<RangeData> readRange(
      CacheDefinition cache, int range, Executor io, NodeMetrics metrics) {
    if (cache.tokens() == null) {
      return read(cache, range, io, metrics).thenApply(block -> block);
    }
    return readRows(cache, range, io, metrics).thenApply(rows -> rows);
  }

  /** Like {@link #read}, the rows of a range of a per-token cache. */
  public static CompletableFuture<RowBlock> readRows(
      CacheDefinition cache, int range, Executor io, NodeMetrics metrics) {
    return CompletableFuture.supplyAsync(
        () -> {
          long started = System.nanoTime();
          try {
            RowBlock rows = cache.tokens().segments().read(range).orElse(null);
            if (rows != null) {
              metrics.segmentRead(System.nanoTime() - started);
            }
            return rows;
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        io);
  }

  /** Like {@link #write}, the complete rows of a range of a per-token cache. */
  public static CompletableFuture<Void> writeRows(
      CacheDefinition cache, RowBlock rows, Executor io, NodeMetrics metrics) {
    return CompletableFuture.runAsync(
        () -> {
          long started = System.nanoTime();
          try {
            cache.tokens().segments().write(rows);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          metrics.segmentWritten(System.nanoTime() - started);
        },
        io);
  }

  /**
   * Writes {@code block} (never mutated afterwards) as its range's segment, crash-safely; a durable
   * write is timed into {@code metrics}.
   */
  public static CompletableFuture<Void> write(
      CacheDefinition cache, Block block, Executor io, NodeMetrics metrics) {
    return CompletableFuture.runAsync(
        () -> {
          long started = System.nanoTime();
          try {
            cache.segments().write(block);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          metrics.segmentWritten(System.nanoTime() - started); // durable writes only
        },
        io);
  }
}
