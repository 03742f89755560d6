package org.tensorcache.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.ComputeOptions;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.launch.OptionRanges;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.segment.SegmentStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The main job on the embedded cluster (one JVM, every role, H2 under the data directory): fills
 * the reference log-prob cache, exports it, measures lookups, then trains DPO from the cache,
 * preempts the trainer part-way, restarts it from its checkpoint and checks that it is served
 * exactly the batches of an uninterrupted run.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = "Fill the DPO reference log-prob cache, train DPO from it through a preemption.")
final class DemoCommand implements Callable<Integer> {
  private static final Duration START = Duration.ofSeconds(120);

  @Mixin JobOptions job;
  @Mixin ComputeOptions compute;

  @Option(
      names = "--dpo-steps",
      defaultValue = "40",
      description = "DPO steps (default: ${DEFAULT-VALUE}).")
  int dpoSteps;

  @Option(
      names = "--batch-size",
      defaultValue = "32",
      description = "Global batch (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(
      names = "--preempt-at",
      defaultValue = "25",
      description = "Step at which the trainer is preempted (default: ${DEFAULT-VALUE}).")
  int preemptAt;

  @Option(
      names = "--checkpoint-every",
      defaultValue = "10",
      description = "Trainer checkpoint interval in steps (default: ${DEFAULT-VALUE}).")
  int checkpointEvery;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Sampler seed (default: ${DEFAULT-VALUE}).")
  long seed;

  /** What the last call measured, for tests. */
  DemoReport report;

  @Override
  public Integer call() throws Exception {
    OptionRanges.atLeast("--dpo-steps", dpoSteps, 1);
    OptionRanges.atLeast("--batch-size", batchSize, 1);
    OptionRanges.atLeast("--checkpoint-every", checkpointEvery, 1);
    if (preemptAt <= checkpointEvery || preemptAt >= dpoSteps) {
      throw new IllegalArgumentException(
          String.format(
              "--preempt-at %d: expected a step after the first checkpoint (%d) and before"
                  + " --dpo-steps %d",
              preemptAt, checkpointEvery, dpoSteps));
    }
    Job prepared = job.prepare(compute);
    String cacheId = prepared.fingerprint().cacheId();
    DemoReport r = new DemoReport(prepared.spec().n());
    System.out.printf(
        "cache %s: %d examples, %d ranges on %s%n",
        cacheId, prepared.spec().n(), prepared.spec().rangeCount(), TinyLm.device());

    DpoDemo dpo =
        new DpoDemo(
            prepared.data(), prepared.cacheDir().resolve("trainer-checkpoint"), checkpointEvery);
    String runId = "demo-" + System.currentTimeMillis();
    NodeLauncher.Node node =
        NodeLauncher.startLocal(job.dataDir(), List.of(prepared.definition()), START);
    try {
      long t0 = System.nanoTime();
      CacheStatus status = ClusterFill.run(node.system(), node.coordinator(), cacheId, true);
      r.fillSeconds = (System.nanoTime() - t0) / 1e9;
      r.computed = TensorCacheNode.get(node.system()).computedExamples();
      if (r.computed == 0) {
        System.out.printf(
            "cache hit: fingerprint %s, all %d ranges persisted and verified; nothing recomputed%n",
            prepared.fingerprint().hex(), status.ranges());
      }
      Path export = export(prepared);
      r.exportBytes = Files.size(export);
      TensorCacheClient client = TensorCacheClient.create(node.system());
      r.lookups = LookupTiming.measure(client, cacheId, prepared.spec().n(), 32, 2000);
      try (TinyLm reference = TinyLm.load(job.modelDir())) {
        dpo.train(reference, DpoDemo.session(client, cacheId, runId, seed, batchSize), preemptAt);
      }
    } finally {
      NodeLauncher.stop(node.system());
    }

    System.out.printf(
        "trainer preempted at step %d; restarting from its checkpoint at step %d%n",
        preemptAt, dpo.checkpointStep);
    r.resumedAt = dpo.checkpointStep;
    int servedBeforeRestart = dpo.served.size();
    node = NodeLauncher.startLocal(job.dataDir(), List.of(prepared.definition()), START);
    try (TinyLm checkpoint = dpo.lastCheckpoint()) {
      TensorCacheClient client = TensorCacheClient.create(node.system());
      var session = DpoDemo.session(client, cacheId, runId, seed, batchSize);
      session.resumeFrom(dpo.checkpointStep);
      dpo.train(checkpoint, session, dpoSteps);
    } finally {
      NodeLauncher.stop(node.system());
    }
    r.mismatches = replayMismatches(dpo, prepared, export(prepared));
    if (dpo.served.get(servedBeforeRestart).step() != r.resumedAt) {
      r.mismatches++; // the restarted trainer must go on exactly at its checkpoint
    }
    r.lossFirst = dpo.losses.get(0);
    r.lossLast = dpo.losses.get(dpo.losses.size() - 1);
    report = r;
    return r.print(prepared);
  }

  /** Writes the export from the verified segments (again only when a segment is newer). */
  private static Path export(Job job) throws Exception {
    Path export = SegmentExport.defaultFile(job.cacheDir());
    SegmentStore<Block> store =
        SegmentStore.open(job.definition().segmentDir(), job.spec(), job.fingerprint());
    long newest = 0;
    for (int range : store.persistedRanges()) {
      newest = Math.max(newest, Files.getLastModifiedTime(store.pathOf(range)).toMillis());
    }
    if (Files.exists(export) && Files.getLastModifiedTime(export).toMillis() >= newest) {
      return export;
    }
    SegmentExport.write(job, export);
    return export;
  }

  /**
   * Counts served steps that differ from an uninterrupted run: the sampler's indices for the step
   * and the exported values of those indices; every step replayed after the restart must also equal
   * what was served before it.
   */
  private int replayMismatches(DpoDemo dpo, Job job, Path export) throws Exception {
    List<Block> blocks = CacheExport.read(export, job.spec(), job.fingerprint());
    Sampler sampler = Sampler.of(job.spec().n(), seed, batchSize, 1);
    java.util.Map<Long, DpoDemo.Served> first = new java.util.HashMap<>();
    int mismatches = 0;
    long expectedStep = 0;
    for (DpoDemo.Served s : dpo.served) {
      if (s.step() != expectedStep) {
        expectedStep = s.step(); // the resume: it must replay a step served before
        if (!first.containsKey(s.step())) {
          mismatches++;
        }
      }
      expectedStep++;
      long[] indices = sampler.indices(s.step(), 0);
      float[] chosen = new float[indices.length];
      float[] rejected = new float[indices.length];
      for (int i = 0; i < indices.length; i++) {
        Block b = blocks.get(job.spec().rangeOf(indices[i]));
        b.copyValues(0, indices[i], chosen, i);
        b.copyValues(1, indices[i], rejected, i);
      }
      DpoDemo.Served expected = new DpoDemo.Served(s.step(), indices, chosen, rejected);
      DpoDemo.Served before = first.putIfAbsent(s.step(), s);
      if (!s.sameAs(expected) || (before != null && !s.sameAs(before))) {
        mismatches++;
      }
    }
    if (expectedStep != dpoSteps) {
      mismatches++;
    }
    return mismatches;
  }

  /** Random batches from the local replica: the trainer's read path. */
  static final class LookupTiming {
    private LookupTiming() {}

    static double[] measure(TensorCacheClient client, String cacheId, long n, int b, int count) {
      SplittableRandom random = new SplittableRandom(7);
      long[] nanos = new long[count];
      long[] indices = new long[b];
      for (int round = -count / 4; round < count; round++) {
        for (int i = 0; i < b; i++) {
          indices[i] = random.nextLong(n);
        }
        long t0 = System.nanoTime();
        client.lookup(cacheId, indices);
        if (round >= 0) {
          nanos[round] = System.nanoTime() - t0; // the first rounds warm the JIT up
        }
      }
      java.util.Arrays.sort(nanos);
      return new double[] {nanos[count / 2] / 1e3, nanos[(int) (count * 0.99)] / 1e3};
    }
  }
}
