package org.tensorcache.bench.remote;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.tensorcache.bench.report.Stats;

/**
 * Closed-loop load: each thread sends a request of B random indices, waits for the reply, checks it
 * and sends the next. Only the request-reply is timed; the check runs between requests.
 */
public final class Load {
  private Load() {}

  /** One thread's connection to the system under test. */
  public interface Target<R> extends AutoCloseable {
    /** The values of {@code indices}. */
    R fetch(long[] indices) throws Exception;

    /**
     * Throws if {@code reply} is not exactly the values of {@code indices}; returns how many of the
     * examples it checked (all of them, or none where a target checks a sample of its replies).
     */
    int check(long[] indices, R reply);

    @Override
    default void close() throws Exception {}
  }

  /** Makes the target of one thread. */
  public interface Targets {
    /** A new target, for one thread. */
    Target<?> open() throws Exception;
  }

  /**
   * Runs {@code threads} threads over {@code targets} for {@code warmupS} then {@code measureS}
   * seconds; returns batches/s over the measured window and latency percentiles in microseconds.
   * The indices are drawn from a seed of (batch, thread), so every system gets the same requests.
   */
  public static Map<String, Object> run(
      Targets targets,
      Map<String, LongSupplier> cpu,
      int n,
      int batch,
      int threads,
      double warmupS,
      double measureS)
      throws Exception {
    long start = System.nanoTime();
    long measureFrom = start + (long) (warmupS * 1e9);
    long measureTo = measureFrom + (long) (measureS * 1e9);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> counts = new ArrayList<>();
      List<Histogram> histograms = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Histogram h = new Histogram(3);
        histograms.add(h);
        long seed = batch * 1_000L + t;
        Callable<long[]> loop = () -> loop(targets, n, batch, seed, measureFrom, measureTo, h);
        counts.add(pool.submit(loop));
      }
      Map<String, Long> cpuBefore = sampleAt(cpu, measureFrom);
      Map<String, Long> cpuAfter = sampleAt(cpu, measureTo);
      long requests = 0;
      long checked = 0;
      Histogram all = new Histogram(3);
      for (int t = 0; t < threads; t++) {
        long[] c = counts.get(t).get();
        requests += c[0];
        checked += c[1];
        all.add(histograms.get(t));
      }
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("batch", batch);
      row.put("threads", threads);
      row.put("batches_per_s", Math.round(requests / measureS));
      // none when one request outlasts the window (a short run on a busy machine)
      row.put("p50_us", requests == 0 ? null : Stats.round1(all.getValueAtPercentile(50) / 1e3));
      row.put("p99_us", requests == 0 ? null : Stats.round1(all.getValueAtPercentile(99) / 1e3));
      for (String name : cpu.keySet()) {
        long used = cpuAfter.get(name) - cpuBefore.get(name);
        if (cpuBefore.get(name) >= 0 && requests > 0) {
          row.put("cpu_us_per_batch_" + name, Stats.round1(used / 1e3 / requests));
        }
      }
      row.put("requests", requests);
      row.put("values_checked", checked);
      return row;
    } finally {
      pool.shutdownNow();
    }
  }

  /** Samples every meter once {@code at} (a nanoTime) has come. */
  private static Map<String, Long> sampleAt(Map<String, LongSupplier> cpu, long at)
      throws InterruptedException {
    long wait = at - System.nanoTime();
    if (wait > 0) {
      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
    }
    Map<String, Long> out = new LinkedHashMap<>();
    cpu.forEach((name, meter) -> out.put(name, meter.getAsLong()));
    return out;
  }

  @SuppressWarnings("unchecked")
  private static long[] loop(
      Targets targets, int n, int batch, long seed, long from, long to, Histogram h)
      throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    long requests = 0;
    long checked = 0;
    try (Target<Object> target = (Target<Object>) targets.open()) {
      while (true) {
        long[] indices = new long[batch];
        for (int i = 0; i < batch; i++) {
          indices[i] = random.nextInt(n);
        }
        long t0 = System.nanoTime();
        if (t0 >= to) {
          break;
        }
        Object reply = target.fetch(indices);
        long t1 = System.nanoTime();
        checked += target.check(indices, reply);
        if (t1 >= from && t1 <= to) { // replies that came in the measured window
          h.recordValue(t1 - t0);
          requests++;
        }
      }
    }
    return new long[] {requests, checked};
  }
}
