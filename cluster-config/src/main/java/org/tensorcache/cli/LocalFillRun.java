package org.tensorcache.cli;

import java.io.IOException;
import me.tongfei.progressbar.ProgressBar;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.Progress;
import org.tensorcache.launch.TeacherJob;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** {@code fill --local}: the job's cache filled by {@link LocalFill} in this process alone. */
final class LocalFillRun {
  private LocalFillRun() {}

  /** Fills every range not persisted yet into the job's segment directory and prints a summary. */
  static LocalFill.Result<?> run(Job job) throws IOException {
    var d = job.definition();
    return run(
        job.fingerprint(),
        job.spec(),
        job.data(),
        d.segments(),
        d.planner(),
        () -> new BlockRanges(d.runners().get(), job.spec()));
  }

  /** As {@link #run(Job)}, for a distillation teacher's per-token cache. */
  static LocalFill.Result<?> run(TeacherJob job) throws IOException {
    CacheSpec spec = job.id().spec();
    return run(
        job.id().fingerprint(),
        spec,
        job.rows(),
        job.segments(),
        job.planner(),
        () -> new RowRanges(job.runners().get(), spec));
  }

  /** How the ranges are computed: made once the fill starts, closed when it ends. */
  private interface Kind<V> {
    LocalRanges<V> open();
  }

  private static <V> LocalFill.Result<V> run(
      Fingerprint fingerprint,
      CacheSpec spec,
      ExampleSet rows,
      Segments<V> store,
      BatchPlanner planner,
      Kind<V> kind)
      throws IOException {
    store.deleteTemporaries();
    int persisted = store.persistedRanges().size();
    System.out.printf(
        "filling %s in this process: %d examples, %d ranges (%d already persisted) on %s%n",
        fingerprint.cacheId(), spec.n(), spec.rangeCount(), persisted, TinyLm.device());
    long t0 = System.nanoTime();
    LocalFill.Result<V> result;
    try (LocalRanges<V> ranges = kind.open();
        ProgressBar bar = Progress.examples("fill " + spec.name(), spec.n())) {
      result = new LocalFill<>(ranges, rows, spec, store, planner).run(bar::stepBy);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double computeSeconds = result.computeNanos() / 1e9;
    System.out.printf(
        "filled %s: %d examples in %d ranges persisted (%d reused); %d computed in %.1f s"
            + " (%s examples/s)%n",
        fingerprint.cacheId(),
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
