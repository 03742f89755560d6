package org.tensorcache.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Fills one cache in this process: every range whose segment is missing, incomplete or rejected is
 * computed (the groups with a missing example) and written as a segment; verified segments are
 * reused. The same for blocks and for per-token rows ({@link LocalRanges}).
 *
 * @param <V> one range's values
 */
final class LocalFill<V> {
  private static final Logger log = LoggerFactory.getLogger(LocalFill.class);

  /** What a fill did; {@code ranges} holds every range's values, in order. */
  record Result<V>(List<V> ranges, int rangesReused, long examplesComputed, long computeNanos) {}

  private final LocalRanges<V> kind;
  private final ExampleSet data;
  private final CacheSpec spec;
  private final Segments<V> store;
  private final BatchPlanner planner;

  LocalFill(
      LocalRanges<V> kind,
      ExampleSet data,
      CacheSpec spec,
      Segments<V> store,
      BatchPlanner planner) {
    if (data.size() != spec.n()) {
      throw new IllegalArgumentException(
          "data set has " + data.size() + " examples, cache spec expects " + spec.n());
    }
    this.kind = kind;
    this.data = data;
    this.spec = spec;
    this.store = store;
    this.planner = planner;
  }

  /** Fills every range, calling {@code progress} with the number of examples just done. */
  Result<V> run(LongConsumer progress) throws IOException {
    List<V> ranges = new ArrayList<>(spec.rangeCount());
    int reused = 0;
    long computed = 0;
    long nanos = 0;
    for (int r = 0; r < spec.rangeCount(); r++) {
      V values = readVerified(r).orElse(null);
      if (values != null && kind.presentCount(values) == kind.length(values)) {
        reused++;
        progress.accept(kind.length(values));
        ranges.add(values);
        continue;
      }
      if (values == null) {
        values = kind.empty(r);
      } else {
        progress.accept(kind.presentCount(values));
      }
      long t0 = System.nanoTime();
      computed += computeMissing(values, progress);
      nanos += System.nanoTime() - t0;
      store.write(values);
      ranges.add(values);
    }
    return new Result<>(ranges, reused, computed, nanos);
  }

  private Optional<V> readVerified(int range) throws IOException {
    try {
      return store.read(range);
    } catch (SegmentRejectedException e) {
      log.warn(
          "segment of range {} rejected, it will be computed again: {}", range, e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * Computes every group of the range that has a missing row, whole: the groups are the planner's,
   * as a cluster's shards compute them, so a row gets the same bits either way.
   */
  private long computeMissing(V values, LongConsumer progress) {
    long start = kind.start(values);
    List<Example> rows = data.slice(start, start + kind.length(values));
    long done = 0;
    for (int[] group : planner.groups(rows)) {
      List<Example> batch = new ArrayList<>(group.length);
      int missing = 0;
      for (int offset : group) {
        batch.add(rows.get(offset));
        missing += kind.isPresent(values, start + offset) ? 0 : 1;
      }
      if (missing == 0) {
        continue;
      }
      kind.compute(batch, values);
      done += missing;
      progress.accept(missing);
    }
    return done;
  }
}
