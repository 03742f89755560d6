package org.tensorcache.bench.scale;

import java.util.List;
import java.util.Map;

/** The printed tables of the scale benchmark: each figure with its reference and its target. */
final class ScaleTable {
  /** Largest bytes per cached float: 10% over the 4 bytes of the float itself. */
  static final double BYTES_PER_FLOAT_TARGET = 4.4;

  /** Largest lookup p50 as a multiple of the plain float[] gather of the same indices. */
  static final double LOOKUP_RATIO_TARGET = 3.0;

  private ScaleTable() {}

  /** 10000 as 10k, 1000000 as 1M. */
  static String count(long n) {
    if (n >= 1_000_000 && n % 1_000_000 == 0) {
      return n / 1_000_000 + "M";
    }
    if (n >= 1_000 && n % 1_000 == 0) {
      return n / 1_000 + "k";
    }
    return Long.toString(n);
  }

  /** One scaling case on one line. */
  @SuppressWarnings("unchecked")
  static String scalingLine(Map<String, Object> row) {
    Map<String, Object> l = (Map<String, Object>) row.get("lookup");
    return String.format(
        "%-16s %12s %12s %9s %9s %9s %9s %9s %6s %6s",
        row.get("case"),
        String.format("%,d", (Long) row.get("fill_examples_per_s")),
        String.format("%,d", (Long) row.get("runner_alone_examples_per_s")),
        l.get("cache_p50_us"),
        l.get("cache_p99_us"),
        l.get("into_p50_us"),
        l.get("array_p50_us"),
        l.get("array_p99_us"),
        l.get("p50_ratio"),
        l.get("values_wrong"));
  }

  @SuppressWarnings("unchecked")
  static void print(Map<String, Object> results) {
    Map<String, Object> m = (Map<String, Object>) results.get("memory");
    System.out.println();
    System.out.printf(
        "memory, N = %s examples x 2 float fields (%s floats), one node:%n",
        count(((Number) m.get("examples")).longValue()),
        count(((Number) m.get("floats")).longValue()));
    System.out.printf(
        "%-30s %13s %13s %13s %11s %11s %7s %7s%n",
        "state",
        "heap delta",
        "off-heap",
        "(code/class)",
        "bytes/float",
        "(w/o code)",
        "copies",
        "target");
    for (String state : List.of("after_fill", "steady")) {
      Map<String, Object> f = (Map<String, Object>) m.get(state);
      System.out.printf(
          "%-30s %,13d %,13d %,13d %11s %11s %7s %7s%n",
          state.equals("after_fill")
              ? "just after the fill"
              : "shards passivated (" + f.get("shard_actors_alive") + " left)",
          ((Number) f.get("heap_delta_bytes")).longValue(),
          ((Number) f.get("off_heap_delta_bytes")).longValue(),
          ((Number) f.get("runtime_off_heap_delta_bytes")).longValue(),
          f.get("bytes_per_float"),
          f.get("bytes_per_float_without_runtime"),
          f.get("float_array_copies"),
          "<= " + BYTES_PER_FLOAT_TARGET);
    }
    System.out.printf(
        "data set (lazy list, copied by ExampleSet): %,d bytes of heap%n",
        ((Number) m.get("dataset_heap_bytes")).longValue());
    System.out.println();
    System.out.println(
        "scaling (B=256 lookups from node 0's replica next to a float[] gather; "
            + "synthetic runner):");
    System.out.printf(
        "%-16s %12s %12s %9s %9s %9s %9s %9s %6s %6s%n",
        "case",
        "fill ex/s",
        "runner ex/s",
        "p50 us",
        "p99 us",
        "into p50",
        "arr p50",
        "arr p99",
        "ratio",
        "wrong");
    for (Map<String, Object> row : (List<Map<String, Object>>) results.get("scaling")) {
      System.out.println(scalingLine(row));
    }
    System.out.printf(
        "targets: bytes/float <= %.1f; lookup p50 <= %.0fx the float[] gather; wrong = 0%n",
        BYTES_PER_FLOAT_TARGET, LOOKUP_RATIO_TARGET);
  }
}
