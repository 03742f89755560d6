package org.tensorcache.cli;

import java.io.IOException;
import me.tongfei.progressbar.ProgressBar;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.Progress;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;

/** {@code fill --local}: the job's cache filled by {@link LocalFill} in this process alone. */
final class LocalFillRun {
  private LocalFillRun() {}

  /** Fills every range not persisted yet into the job's segment directory and prints a summary. */
  static LocalFill.Result run(Job job) throws IOException {
    CacheSpec spec = job.spec();
    Segments<Block> store = job.definition().segments();
    store.deleteTemporaries();
    int persisted = store.persistedRanges().size();
    System.out.printf(
        "filling %s in this process: %d examples, %d ranges (%d already persisted) on %s%n",
        job.fingerprint().cacheId(), spec.n(), spec.rangeCount(), persisted, TinyLm.device());
    long t0 = System.nanoTime();
    LocalFill.Result result;
    try (ModelRunner runner = job.definition().runners().get();
        ProgressBar bar = Progress.examples("fill " + spec.name(), spec.n())) {
      LocalFill fill = new LocalFill(runner, job.data(), spec, store, job.definition().planner());
      result = fill.run(bar::stepBy);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double computeSeconds = result.computeNanos() / 1e9;
    System.out.printf(
        "filled %s: %d examples in %d ranges persisted (%d reused); %d computed in %.1f s"
            + " (%s examples/s)%n",
        job.fingerprint().cacheId(),
        spec.n(),
        spec.rangeCount(),
        result.rangesReused(),
        result.examplesComputed(),
        seconds,
        computeSeconds > 0
            ? String.format("%.0f", result.examplesComputed() / computeSeconds)
            : "-");
    return result;
  }
}
