package org.tensorcache.bench.scale;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;

/**
 * Memory and scaling of the cache with a synthetic runner, so that the figures are the cache's own:
 * bytes per cached float ({@link MemoryMeasure}), fill and lookups by N and by nodes ({@link
 * ScalingBench}). Quick mode takes under a minute; the full run about ten minutes, most of it
 * waiting for idle shard entities to passivate (2 to 3 minutes, twice). Needs a 4 GiB heap: the 10
 * million case holds the data set, the replica, the shards' copies and the reference arrays.
 */
public final class ScaleBench {
  /** Largest bytes per cached float: 10% over the 4 bytes of the float itself. */
  static final double BYTES_PER_FLOAT_TARGET = 4.4;

  /** Largest lookup p50 as a multiple of the plain float[] gather of the same indices. */
  static final double LOOKUP_RATIO_TARGET = 3.0;

  private ScaleBench() {}

  /** Runs both, prints the tables and writes {@code resultsDir/scale.json} and charts. */
  public static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    long t0 = System.nanoTime();
    Files.createDirectories(work);
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "scale");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    results.put("range_size", ScaleCaches.RANGE_SIZE);
    results.put("micro_batch", ScaleCaches.MICRO_BATCH);
    Map<String, Object> targets = new LinkedHashMap<>();
    targets.put("bytes_per_float", BYTES_PER_FLOAT_TARGET);
    targets.put("lookup_p50_ratio", LOOKUP_RATIO_TARGET);
    results.put("targets", targets);
    System.out.printf(
        "== memory per cached float (%s) ==%n",
        size == RunSize.FULL ? "child JVM, native memory tracking" : "this JVM");
    long tm = System.nanoTime();
    Map<String, Object> memory = MemoryMeasure.run(work, size);
    results.put("memory", memory);
    results.put("memory_s", Stats.round2((System.nanoTime() - tm) / 1e9));
    System.out.println("== fill and lookups as N and the nodes grow ==");
    long ts = System.nanoTime();
    Table scaling = ScalingBench.run(work, size);
    List<Map<String, Object>> rows = scaling.json();
    results.put("scaling", rows);
    results.put("scaling_s", Stats.round2((System.nanoTime() - ts) / 1e9));
    results.put("total_s", Stats.round2((System.nanoTime() - t0) / 1e9));

    System.out.printf(
        "%nmemory, N = %s examples x 2 float fields (%s floats), one node:%n",
        count(((Number) memory.get("examples")).longValue()),
        count(((Number) memory.get("floats")).longValue()));
    // headers padded by hand: Table reads no width from a format with a flag
    Table m =
        new Table(null)
            .col("state", "%-30s")
            .col("heap", "   heap delta", "%,13d")
            .col("off", "     off-heap", "%,13d")
            .col("code", " (code/class)", "%,13d")
            .col("bytes", "bytes/float", "%11s")
            .col("nocode", "(w/o code)", "%11s")
            .col("copies", "%7s")
            .col("target", "%7s");
    for (String state : List.of("after_fill", "steady")) {
      Map<?, ?> f = (Map<?, ?>) memory.get(state);
      m.row(
          state.equals("after_fill")
              ? "just after the fill"
              : "shards passivated (" + f.get("shard_actors_alive") + " left)",
          f.get("heap_delta_bytes"),
          f.get("off_heap_delta_bytes"),
          f.get("runtime_off_heap_delta_bytes"),
          f.get("bytes_per_float"),
          f.get("bytes_per_float_without_runtime"),
          f.get("float_array_copies"),
          "<= " + BYTES_PER_FLOAT_TARGET);
    }
    m.print();
    System.out.printf(
        "data set (lazy list, copied by ExampleSet): %,d bytes of heap%n%n",
        memory.get("dataset_heap_bytes"));
    System.out.println(
        "scaling (B=256 lookups from node 0's replica next to a float[] gather; "
            + "synthetic runner):");
    scaling.print();
    System.out.printf(
        "targets: bytes/float <= %.1f; lookup p50 <= %.0fx the float[] gather; wrong = 0%n",
        BYTES_PER_FLOAT_TARGET, LOOKUP_RATIO_TARGET);
    Results.write(resultsDir.resolve("scale.json"), results);
    charts(resultsDir, rows, memory);
    System.out.printf("scale: done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
  }

  /** 10000 as 10k, 1000000 as 1M. */
  static String count(long n) {
    if (n >= 1_000_000 && n % 1_000_000 == 0) {
      return n / 1_000_000 + "M";
    }
    return n >= 1_000 && n % 1_000 == 0 ? n / 1_000 + "k" : Long.toString(n);
  }

  private static void charts(Path dir, List<Map<String, Object>> rows, Map<String, Object> memory)
      throws Exception {
    Map<String, Map<String, Double>> lookups = new LinkedHashMap<>();
    lookups.put("lookup", series(rows, "lookup/cache_p50_us", 1));
    lookups.put("lookupInto (reused arrays)", series(rows, "lookup/into_p50_us", 1));
    lookups.put("float[] gather", series(rows, "lookup/array_p50_us", 1));
    Charts.bars(
        dir.resolve("scale.png"),
        "Lookup B=256 from the near replica, p50",
        "microseconds",
        lookups);
    Charts.bars(
        dir.resolve("scale-fill.png"),
        "Fill throughput, synthetic runner",
        "thousand examples/s",
        Map.of("TensorCache fill", series(rows, "fill_examples_per_s", 1000)));
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    for (String s :
        List.of("TensorCache", "without compiled code and classes", "target", "the float itself")) {
      series.put(s, new LinkedHashMap<>());
    }
    // the steady state first: the legend sits over the first group
    for (String state : List.of("steady", "after_fill")) {
      String label = state.equals("after_fill") ? "just after the fill" : "shards passivated";
      Map<?, ?> f = (Map<?, ?>) memory.get(state);
      series.get("TensorCache").put(label, ((Number) f.get("bytes_per_float")).doubleValue());
      series
          .get("without compiled code and classes")
          .put(label, ((Number) f.get("bytes_per_float_without_runtime")).doubleValue());
      series.get("target").put(label, BYTES_PER_FLOAT_TARGET);
      series.get("the float itself").put(label, 4.0);
    }
    Charts.bars(
        dir.resolve("memory.png"),
        "Bytes per cached float, N = "
            + count(((Number) memory.get("examples")).longValue())
            + " x 2 fields",
        "bytes",
        series);
  }

  /** The figure {@code path} ({@code a/b}: key b of object a) of every case, in {@code unit}s. */
  private static Map<String, Double> series(
      List<Map<String, Object>> rows, String path, double unit) {
    Map<String, Double> s = new LinkedHashMap<>();
    for (Map<String, Object> row : rows) {
      Object v = row;
      for (String key : path.split("/")) {
        v = ((Map<?, ?>) v).get(key);
      }
      s.put((String) row.get("case"), ((Number) v).doubleValue() / unit);
    }
    return s;
  }
}
