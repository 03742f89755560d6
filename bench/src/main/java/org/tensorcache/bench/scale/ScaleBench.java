package org.tensorcache.bench.scale;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.PartArgs;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;

/**
 * Memory and scaling of the cache with a synthetic runner, so that the figures are the cache's own:
 * bytes per cached float at N = 10 million (in a child JVM with native memory tracking), fill
 * throughput and B=256 lookup latency at N = 10 thousand, 1 million and 10 million, and with 1, 2
 * and 3 nodes at N = 1 million. Prints a table with the targets, writes {@code scale.json} and
 * charts. Quick mode (N up to 1 million, 1 and 2 nodes) takes under a minute; the full run about
 * ten minutes, most of it waiting for idle shard entities to passivate (2 to 3 minutes, twice).
 *
 * <p>Run from the launcher class path with a 4 GiB heap (the 10 million case holds the data set,
 * the replica, the shards' copies and the reference arrays); the full memory measurement starts its
 * own JVM: {@code java -Xmx4g -Djava.awt.headless=true -cp "bench/target/classes:
 * bench/target/lib/*" org.tensorcache.bench.scale.ScaleBench [--quick | --smoke]}.
 */
public final class ScaleBench {
  private ScaleBench() {}

  /** Usage: {@code ScaleBench [--quick | --smoke] [--out DIR] [--work DIR]}. */
  public static void main(String[] args) throws Exception {
    PartArgs p = PartArgs.parse(args);
    run(p.work(), p.out(), p.size());
    // the stopped nodes leave no work behind, but a non-daemon pool thread would hold the JVM
    System.exit(0);
  }

  /** Runs every part, prints the tables and writes {@code resultsDir/scale.json} and charts. */
  public static Map<String, Object> run(Path work, Path resultsDir, RunSize size) throws Exception {
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
    targets.put("bytes_per_float", ScaleTable.BYTES_PER_FLOAT_TARGET);
    targets.put("lookup_p50_ratio", ScaleTable.LOOKUP_RATIO_TARGET);
    results.put("targets", targets);

    System.out.printf(
        "== memory per cached float (%s) ==%n",
        size == RunSize.FULL ? "child JVM, native memory tracking" : "this JVM");
    long tm = System.nanoTime();
    results.put("memory", MemoryBench.run(work, size));
    results.put("memory_s", Stats.round2((System.nanoTime() - tm) / 1e9));
    System.out.println("== fill and lookups as N and the nodes grow ==");
    long ts = System.nanoTime();
    results.put("scaling", ScalingBench.run(work, size));
    results.put("scaling_s", Stats.round2((System.nanoTime() - ts) / 1e9));
    results.put("total_s", Stats.round2((System.nanoTime() - t0) / 1e9));

    ScaleTable.print(results);
    Results.write(resultsDir.resolve("scale.json"), results);
    charts(resultsDir, results);
    System.out.printf("scale: done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    return results;
  }

  @SuppressWarnings("unchecked")
  private static void charts(Path dir, Map<String, Object> results) throws Exception {
    Map<String, Double> cache = new LinkedHashMap<>();
    Map<String, Double> into = new LinkedHashMap<>();
    Map<String, Double> array = new LinkedHashMap<>();
    Map<String, Double> fill = new LinkedHashMap<>();
    for (Map<String, Object> row : (List<Map<String, Object>>) results.get("scaling")) {
      Map<String, Object> l = (Map<String, Object>) row.get("lookup");
      String c = (String) row.get("case");
      cache.put(c, ((Number) l.get("cache_p50_us")).doubleValue());
      into.put(c, ((Number) l.get("into_p50_us")).doubleValue());
      array.put(c, ((Number) l.get("array_p50_us")).doubleValue());
      fill.put(c, ((Number) row.get("fill_examples_per_s")).doubleValue() / 1000);
    }
    Map<String, Map<String, Double>> lookups = new LinkedHashMap<>();
    lookups.put("lookup", cache);
    lookups.put("lookupInto (reused arrays)", into);
    lookups.put("float[] gather", array);
    Charts.bars(
        dir.resolve("scale.png"),
        "Lookup B=256 from the near replica, p50",
        "microseconds",
        lookups);
    Charts.bars(
        dir.resolve("scale-fill.png"),
        "Fill throughput, synthetic runner",
        "thousand examples/s",
        ordered("TensorCache fill", fill, null, null));
    Map<String, Object> m = (Map<String, Object>) results.get("memory");
    Map<String, Double> measured = new LinkedHashMap<>();
    Map<String, Double> withoutCode = new LinkedHashMap<>();
    Map<String, Double> target = new LinkedHashMap<>();
    Map<String, Double> ideal = new LinkedHashMap<>();
    // the steady state first: the legend sits over the first group
    for (String state : List.of("steady", "after_fill")) {
      String label = state.equals("after_fill") ? "just after the fill" : "shards passivated";
      Map<String, Object> f = (Map<String, Object>) m.get(state);
      measured.put(label, ((Number) f.get("bytes_per_float")).doubleValue());
      withoutCode.put(label, ((Number) f.get("bytes_per_float_without_runtime")).doubleValue());
      target.put(label, ScaleTable.BYTES_PER_FLOAT_TARGET);
      ideal.put(label, 4.0);
    }
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    series.put("TensorCache", measured);
    series.put("without compiled code and classes", withoutCode);
    series.put("target", target);
    series.put("the float itself", ideal);
    Charts.bars(
        dir.resolve("memory.png"),
        "Bytes per cached float, N = "
            + ScaleTable.count(((Number) m.get("examples")).longValue())
            + " x 2 fields",
        "bytes",
        series);
  }

  private static Map<String, Map<String, Double>> ordered(
      String first, Map<String, Double> a, String second, Map<String, Double> b) {
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    series.put(first, a);
    if (second != null) {
      series.put(second, b);
    }
    return series;
  }
}
