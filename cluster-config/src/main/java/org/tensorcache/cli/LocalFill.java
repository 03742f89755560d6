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
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Fills one cache in this process: every range whose segment is missing, incomplete or rejected is
 * computed (the groups with a missing example) and written as a segment; verified segments are
 * reused.
 */
final class LocalFill {
  private static final Logger log = LoggerFactory.getLogger(LocalFill.class);

  /** What a fill did; {@code blocks} holds every range, in order. */
  record Result(List<Block> blocks, int rangesReused, long examplesComputed, long computeNanos) {}

  private final ModelRunner runner;
  private final ExampleSet data;
  private final CacheSpec spec;
  private final Segments<Block> store;
  private final BatchPlanner planner;

  LocalFill(
      ModelRunner runner,
      ExampleSet data,
      CacheSpec spec,
      Segments<Block> store,
      BatchPlanner planner) {
    if (data.size() != spec.n()) {
      throw new IllegalArgumentException(
          "data set has " + data.size() + " examples, cache spec expects " + spec.n());
    }
    this.runner = runner;
    this.data = data;
    this.spec = spec;
    this.store = store;
    this.planner = planner;
  }

  /** Fills every range, calling {@code progress} with the number of examples just done. */
  Result run(LongConsumer progress) throws IOException {
    List<Block> blocks = new ArrayList<>(spec.rangeCount());
    int reused = 0;
    long computed = 0;
    long nanos = 0;
    for (int r = 0; r < spec.rangeCount(); r++) {
      Block block = readVerified(r).orElseGet(() -> null);
      if (block != null && block.isComplete()) {
        reused++;
        progress.accept(block.length());
        blocks.add(block);
        continue;
      }
      if (block == null) {
        block = Block.empty(spec, r);
      } else {
        progress.accept(block.presentCount());
      }
      long t0 = System.nanoTime();
      computed += computeMissing(block, progress);
      nanos += System.nanoTime() - t0;
      store.write(block);
      blocks.add(block);
    }
    return new Result(blocks, reused, computed, nanos);
  }

  private Optional<Block> readVerified(int range) throws IOException {
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
  private long computeMissing(Block block, LongConsumer progress) {
    List<Example> rows = data.slice(block.start(), block.start() + block.length());
    long done = 0;
    for (int[] group : planner.groups(rows)) {
      List<Example> batch = new ArrayList<>(group.length);
      int missing = 0;
      for (int offset : group) {
        batch.add(rows.get(offset));
        missing += block.isPresent(block.start() + offset) ? 0 : 1;
      }
      if (missing == 0) {
        continue;
      }
      RunnerOutput out = runner.run(batch);
      for (int row = 0; row < out.size(); row++) {
        if (!block.isPresent(out.index(row))) {
          block.put(out.index(row), out.row(row));
        }
      }
      done += missing;
      progress.accept(missing);
    }
    return done;
  }
}
