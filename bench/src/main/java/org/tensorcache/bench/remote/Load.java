package org.tensorcache.bench.remote;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.report.Stats;

/**
 * Closed-loop load: each thread sends a request of B random indices, waits for the reply, checks it
 * and sends the next. Only the request-reply is timed; the check runs between requests.
 */
public final class Load {
  private static final long NANOS_PER_TICK = 10_000_000L; // Linux USER_HZ is 100

  private Load() {}

  /** One thread's connection to the system under test. */
  public interface Target<R> extends AutoCloseable {
    R fetch(long[] indices) throws Exception;

    /**
     * Throws unless {@code reply} holds the values of {@code indices}; returns how many it checked.
     */
    int check(long[] indices, R reply);

    @Override
    default void close() throws Exception {}
  }

  /** Makes the target of one thread. */
  public interface Targets {
    Target<?> open() throws Exception;
  }

  /**
   * Runs {@code threads} threads for {@code warmupS} then {@code measureS} seconds; returns
   * batches/s over the measured window, latency percentiles in microseconds and, per meter of
   * {@code cpu}, CPU time per batch. The indices are drawn from a seed of (batch, thread), so every
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
    long measureFrom = System.nanoTime() + (long) (warmupS * 1e9);
    long measureTo = measureFrom + (long) (measureS * 1e9);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> counts = new ArrayList<>();
      List<Histogram> histograms = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Histogram h = new Histogram(3);
        histograms.add(h);
        long seed = batch * 1_000L + t;
        counts.add(pool.submit(() -> loop(targets, n, batch, seed, measureFrom, measureTo, h)));
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

  /**
   * CPU meters, in nanoseconds, of this JVM ("client") and of process {@code serverPid} from {@code
   * /proc} ("server", -1 where unreadable). On a busy machine latency mostly measures the
   * scheduler; CPU time per batch is what a request costs whatever else runs.
   */
  public static Map<String, LongSupplier> cpu(long serverPid) {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Path stat = Path.of("/proc", Long.toString(serverPid), "stat");
    Map<String, LongSupplier> meters = new LinkedHashMap<>();
    meters.put("client", os::getProcessCpuTime);
    meters.put(
        "server",
        () -> {
          try {
            String s = Files.readString(stat);
            // the command name may hold spaces: the fields that follow start after its ')'
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
          } catch (IOException | RuntimeException e) {
            return -1;
          }
        });
    return meters;
  }

  /**
   * One client per thread of the lookup port at {@code hostPort}, into arrays it reuses as a data
   * loader would; every {@code checkEvery}th reply is checked whole, the first included.
   */
  public static Targets port(
      String hostPort, LookupSecurity security, String cacheId, int checkEvery) {
    int colon = hostPort.lastIndexOf(':');
    var address =
        new InetSocketAddress(
            hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    return () -> {
      var client = RemoteLookupClient.connect(List.of(address), Duration.ofSeconds(10), security);
      return new Target<float[][]>() {
        private final float[][] out = new float[2][4096];
        private long replies;

        @Override
        public float[][] fetch(long[] indices) {
          client.lookupInto(cacheId, indices, out);
          return out;
        }

        @Override
        public int check(long[] indices, float[][] reply) {
          return replies++ % checkEvery == 0 ? expect(indices, reply[0], reply[1]) : 0;
        }

        @Override
        public void close() {
          client.close();
        }
      };
    };
  }

  /**
   * Throws unless {@code chosen} and {@code rejected} hold the values of {@code indices} that
   * {@link SyntheticRunner} computes with {@link ServerNode#SEED}; returns how many were checked.
   */
  public static int expect(long[] indices, float[] chosen, float[] rejected) {
    ServerNode.check(ServerNode.SEED, indices, chosen, rejected, "served");
    return indices.length;
  }
}
