package org.tensorcache.actors.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.segment.SegmentStore;

/** A cache's segment files read and written off the actor threads, on the I/O dispatcher. */
public final class SegmentIo {
  private SegmentIo() {}

  /**
   * The ranges to restore at start: those recorded as persisted and those with a segment file
   * (leftover temporary files are deleted on the way).
   */
  public static java.util.SortedSet<Integer> toRestore(
      CacheDefinition cache, java.util.function.IntPredicate recorded) {
    java.util.SortedSet<Integer> ranges;
    try {
      ranges =
          new java.util.TreeSet<>(
              SegmentStore.open(cache.segmentDir(), cache.spec(), cache.fingerprint())
                  .persistedRanges());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the segments of " + cache.cacheId(), e);
    }
    for (int r = 0; r < cache.spec().rangeCount(); r++) {
      if (recorded.test(r)) {
        ranges.add(r);
      }
    }
    return ranges;
  }

  /** The path of a range's segment. */
  public static Path path(CacheDefinition cache, int range) {
    return cache.segmentDir().resolve(SegmentStore.fileName(range));
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
            Block block =
                SegmentFile.readIfPresent(
                        path(cache, range), cache.spec(), cache.fingerprint(), range)
                    .orElse(null);
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
   * Writes {@code block} (never mutated afterwards) as its range's segment, crash-safely; a durable
   * write is timed into {@code metrics}.
   */
  public static CompletableFuture<Void> write(
      CacheDefinition cache, Block block, Executor io, NodeMetrics metrics) {
    return CompletableFuture.runAsync(
        () -> {
          long started = System.nanoTime();
          try {
            Files.createDirectories(cache.segmentDir());
            SegmentFile.write(path(cache, block.range()), block, cache.fingerprint());
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          metrics.segmentWritten(System.nanoTime() - started); // durable writes only
        },
        io);
  }
}
