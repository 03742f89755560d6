package org.tensorcache.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import me.tongfei.progressbar.ProgressBar;
import org.tensorcache.model.data.PreferenceDataset;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The main job on the embedded default: makes or reuses the seeded data set and reference model,
 * fills the reference log-prob cache, exports it and prints a summary.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = "Fill the DPO reference log-prob cache of a seeded data set and export it.")
final class DemoCommand implements Callable<Integer> {
  @Mixin JobOptions job;

  @Option(
      names = "--micro-batch",
      defaultValue = "64",
      description = "Examples per forward pass (default: ${DEFAULT-VALUE}).")
  int microBatch;

  /** What the last call did, for tests. */
  LocalFill.Result lastResult;

  Fingerprint lastFingerprint;

  @Override
  public Integer call() throws IOException {
    long t0 = System.nanoTime();
    PreferenceDataset data = job.dataset();
    try (ModelRunner runner = new ReferenceLogprobRunner(job.model(), microBatch, job.maxSeqLen)) {
      CacheSpec spec = job.spec(runner, data);
      Fingerprint fingerprint = job.fingerprint(runner, data, spec);
      Path cacheDir = job.dataDir.resolve(fingerprint.cacheId());
      job.writeManifest(cacheDir, runner, data, spec, fingerprint);
      SegmentStore store = SegmentStore.open(cacheDir.resolve("segments"), spec, fingerprint);
      LocalFill fill = new LocalFill(runner, data, spec, store, microBatch);
      Path export = cacheDir.resolve("export.safetensors");

      int persisted = store.persistedRanges().size();
      LocalFill.Result result;
      if (persisted == spec.rangeCount()) {
        result = fill.run(done -> {}); // verifies every segment; computes only rejected ones
      } else {
        System.out.printf(
            "filling %s: %d examples, %d ranges (%d already persisted) on %s%n",
            fingerprint.cacheId(), spec.n(), spec.rangeCount(), persisted, TinyLm.device());
        try (ProgressBar bar = Progress.examples("fill " + spec.name(), spec.n())) {
          result = fill.run(bar::stepBy);
        }
      }
      if (result.examplesComputed() == 0) {
        System.out.printf(
            "cache hit: fingerprint %s, all %d ranges persisted and verified; nothing recomputed%n",
            fingerprint.hex(), spec.rangeCount());
      }
      if (result.examplesComputed() > 0 || !Files.exists(export)) {
        CacheExport.write(export, spec, fingerprint, result.blocks());
      }
      printSummary(spec, fingerprint, result, store, export, System.nanoTime() - t0);
      lastResult = result;
      lastFingerprint = fingerprint;
    }
    return 0;
  }

  private static void printSummary(
      CacheSpec spec,
      Fingerprint fingerprint,
      LocalFill.Result result,
      SegmentStore store,
      Path export,
      long wallNanos)
      throws IOException {
    double wall = wallNanos / 1e9;
    double computeSeconds = result.computeNanos() / 1e9;
    String fields = spec.fields().stream().map(Object::toString).collect(Collectors.joining(", "));
    System.out.println("summary");
    System.out.printf(
        "  examples     %d (%d computed, %d reused)%n",
        spec.n(), result.examplesComputed(), spec.n() - result.examplesComputed());
    System.out.printf("  fields       %s%n", fields);
    System.out.printf(
        "  bytes        %d in %d segments, %d in the export%n",
        segmentBytes(store), spec.rangeCount(), Files.size(export));
    System.out.printf("  wall time    %.2f s (compute %.2f s)%n", wall, computeSeconds);
    System.out.printf(
        "  examples/s   %s%n",
        computeSeconds > 0
            ? String.format("%.0f", result.examplesComputed() / computeSeconds)
            : "- (nothing computed)");
    System.out.printf("  fingerprint  %s%n", fingerprint.hex());
    System.out.printf("  cache        %s%n", fingerprint.cacheId());
    System.out.printf("  export       %s%n", export);
  }

  private static long segmentBytes(SegmentStore store) throws IOException {
    long bytes = 0;
    for (int range : store.persistedRanges()) {
      bytes += Files.size(store.pathOf(range));
    }
    return bytes;
  }
}
