package org.tensorcache.bench.remote;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.report.Stats;

/**
 * Closed-loop load: each thread sends a request of B random indices, waits for the reply, checks it
 * and sends the next. Only the request-reply is timed; the check runs between requests.
 */
public final class Load {
  private Load() {}

  /** One thread's connection to the system under test. */
  public interface Target extends AutoCloseable {
    /** Sends a request and waits for its reply; returns its check, which counts what it checked. */
    IntSupplier fetch(long[] indices) throws Exception;

    @Override
    default void close() throws Exception {}
  }

  /** Opens the target of one thread. */
  public interface Targets {
    Target open() throws Exception;
  }

  /** A system measured by {@link #turns}, with the CPU meters its rows report. */
  public record Side(String name, Targets targets, Map<String, LongSupplier> cpu) {}

  /**
   * Runs {@code threads} threads for {@code warmupS} then {@code measureS} seconds; returns
   * batches/s over the measured window, latency percentiles in microseconds and CPU time per batch
   * of each meter of {@code cpu}. The indices are drawn from a seed of (batch, thread), so every
   * system gets the same requests.
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
    long from = System.nanoTime() + (long) (warmupS * 1e9);
    long to = from + (long) (measureS * 1e9);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> counts = new ArrayList<>();
      List<Histogram> histograms = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Histogram h = new Histogram(3);
        histograms.add(h);
        long seed = batch * 1_000L + t;
        counts.add(pool.submit(() -> loop(targets.open(), n, batch, seed, from, to, h)));
      }
      Map<String, Long> cpuBefore = sampleAt(cpu, from);
      Map<String, Long> cpuAfter = sampleAt(cpu, to);
      Histogram all = new Histogram(3);
      long requests = 0;
      long checked = 0;
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
        if (cpuBefore.get(name) >= 0 && requests > 0) {
          long used = cpuAfter.get(name) - cpuBefore.get(name);
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

  /**
   * Every side in turn for each batch size and thread count, so that all see the same moments of a
   * noisy machine; each row starts with the side's name as {@code system} and {@code tag}.
   */
  public static List<Map<String, Object>> turns(
      List<Side> sides,
      int n,
      int[] batches,
      int[] threads,
      double warmupS,
      double measureS,
      Map<String, ?> tag)
      throws Exception {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int batch : batches) {
      for (int t : threads) {
        for (Side s : sides) {
          Map<String, Object> row = new LinkedHashMap<>(Map.of("system", s.name()));
          row.putAll(tag);
          row.putAll(run(s.targets(), s.cpu(), n, batch, t, warmupS, measureS));
          rows.add(row);
        }
      }
    }
    return rows;
  }

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

  private static long[] loop(
      Target opened, int n, int batch, long seed, long from, long to, Histogram h)
      throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    long requests = 0;
    long checked = 0;
    try (Target target = opened) {
      while (true) {
        long[] indices = random.ints(batch, 0, n).asLongStream().toArray();
        long t0 = System.nanoTime();
        if (t0 >= to) {
          break;
        }
        IntSupplier check = target.fetch(indices);
        long t1 = System.nanoTime();
        checked += check.getAsInt();
        if (t1 >= from && t1 <= to) { // replies that came in the measured window
          h.recordValue(t1 - t0);
          requests++;
        }
      }
    }
    return new long[] {requests, checked};
  }

  /**
   * CPU time in nanoseconds of this JVM ("client") and of process {@code serverPid} ("server", -1
   * where unknown): on a busy machine latency mostly measures the scheduler, CPU time per batch
   * what a request costs whatever else runs.
   */
  public static Map<String, LongSupplier> cpu(long serverPid) {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    LongSupplier server =
        () ->
            ProcessHandle.of(serverPid)
                .flatMap(p -> p.info().totalCpuDuration())
                .map(Duration::toNanos)
                .orElse(-1L);
    return new TreeMap<>(Map.of("client", os::getProcessCpuTime, "server", server));
  }

  /** A row's client and server CPU time per batch together, NaN where it has none. */
  public static double cpuPerBatch(Map<String, Object> row) {
    return num(row, "cpu_us_per_batch_client") + num(row, "cpu_us_per_batch_server");
  }

  /** A row's figure, NaN where it has none. */
  public static double num(Map<String, Object> row, String key) {
    return row.get(key) instanceof Number v ? v.doubleValue() : Double.NaN;
  }

  /**
   * A target that has {@code into} fill two arrays it reuses with a batch's fields, as a data
   * loader would, and checks every {@code checkEvery}th reply whole (the first included).
   */
  public static Target into(
      BiConsumer<long[], float[][]> into, int checkEvery, AutoCloseable onClose) {
    float[][] out = new float[2][4096];
    long[] replies = {0};
    return new Target() {
      @Override
      public IntSupplier fetch(long[] indices) {
        into.accept(indices, out);
        return () -> replies[0]++ % checkEvery == 0 ? expect(indices, out[0], out[1]) : 0;
      }

      @Override
      public void close() throws Exception {
        onClose.close();
      }
    };
  }

  /** One client per thread of the lookup port at {@code hostPort}, see {@link #into}. */
  public static Targets port(
      String hostPort, LookupSecurity security, String cacheId, int checkEvery) {
    return () -> {
      var client =
          RemoteLookupClient.connect(List.of(address(hostPort)), Duration.ofSeconds(10), security);
      return into((indices, out) -> client.lookupInto(cacheId, indices, out), checkEvery, client);
    };
  }

  /** The address of {@code host:port}. */
  public static InetSocketAddress address(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    return new InetSocketAddress(
        hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
  }

  /** {@link ServerNode#check} of values served; returns how many. */
  public static int expect(long[] indices, float[] chosen, float[] rejected) {
    ServerNode.check(ServerNode.SEED, indices, chosen, rejected, "served");
    return indices.length;
  }
}
