package org.tensorcache.actors.shard;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;

/**
 * Keeps up to {@link #DEPTH} groups of one range queued on the compute dispatcher, in the order of
 * its {@link MicroBatchPlan}, so that the device never waits while the shard merges and replicates
 * the previous result.
 */
final class MicroBatchPipeline<C> {
  private static final int DEPTH = 2;

  /** Wraps the outcome of one micro-batch for the shard: its output, or why it failed. */
  interface Done<C> {
    C of(int microBatch, RunnerOutput output, Throwable failure);
  }

  private final ActorContext<C> ctx;
  private final TensorCacheNode node;
  private final CacheDefinition cache;
  private final MicroBatchPlan plan;
  private final Done<C> done;
  private final Set<Integer> inFlight = new HashSet<>();

  MicroBatchPipeline(
      ActorContext<C> ctx,
      TensorCacheNode node,
      CacheDefinition cache,
      long start,
      int length,
      Done<C> done) {
    this.ctx = ctx;
    this.node = node;
    this.cache = cache;
    List<int[]> groups = cache.planner().groups(cache.data().slice(start, start + length));
    this.plan = new MicroBatchPlan(groups, length);
    this.done = done;
  }

  /** What to compute next. */
  MicroBatchPlan plan() {
    return plan;
  }

  /** Whether no micro-batch is being computed. */
  boolean idle() {
    return inFlight.isEmpty();
  }

  /** Starts what the plan asks for next while fewer than {@link #DEPTH} are being computed. */
  void startNext(Block current) {
    while (inFlight.size() < DEPTH) {
      int microBatch = plan.next(current, inFlight::contains);
      if (microBatch < 0) {
        return;
      }
      inFlight.add(microBatch);
      List<Example> examples = new ArrayList<>();
      for (long index : plan.indices(microBatch, current)) {
        examples.add(cache.data().get(index));
      }
      String cacheId = cache.cacheId();
      CompletableFuture<RunnerOutput> work =
          CompletableFuture.supplyAsync(
              () -> node.compute(cacheId, examples), node.computeExecutor());
      ctx.pipeToSelf(work, (out, failure) -> done.of(microBatch, out, failure));
    }
  }

  /**
   * A micro-batch came back: its values as a part of range {@code range}, counted as computed by
   * the node, or null on failure.
   */
  Block finished(int microBatch, RunnerOutput out, Throwable failure, int range) {
    inFlight.remove(microBatch);
    if (failure != null) {
      ctx.getLog()
          .error(
              "range {} of {}: micro-batch {} failed: {}",
              range,
              cache.cacheId(),
              microBatch,
              reason(failure));
      plan.failed(microBatch);
      return null;
    }
    Block part = Block.empty(cache.spec(), range);
    for (int row = 0; row < out.size(); row++) {
      part.put(out.index(row), out.row(row));
    }
    node.addComputed(cache.cacheId(), out.size());
    // one line per micro-batch, at DEBUG, under the shard's logger: what fault-injection tests
    // count to prove that no persisted work is computed again
    ctx.getLog()
        .debug(
            "computed range {} group {} ({} examples) of {}",
            range,
            microBatch,
            out.size(),
            cache.cacheId());
    return part;
  }

  /** What made a micro-batch fail, without the wrapper of the future it ran in. */
  static String reason(Throwable failure) {
    return (failure.getCause() != null ? failure.getCause() : failure).getMessage();
  }
}
