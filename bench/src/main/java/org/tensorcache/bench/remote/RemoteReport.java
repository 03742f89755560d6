package org.tensorcache.bench.remote;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Table;

/** The table, the targets and the chart of the remote benchmark's rows. */
final class RemoteReport {
  private RemoteReport() {}

  /**
   * One line per transport, batch and thread count, beside Redis measured next to it; "cpu" is the
   * CPU time of client and server together per batch.
   */
  static Table besideRedis(List<Map<String, Object>> rows) {
    Table t =
        new Table(null)
            .col("system", "system", "%-6s")
            .col("batch", "B", "%4d")
            .col("threads", "thr", "%3d");
    for (String side : List.of("tensorcache", "redis")) {
      t.col(side + "/batches_per_s", side.equals("redis") ? "redis b/s" : "batches/s", "%9d")
          .col(side + "/p50_us", "p50 us", "%8.0f")
          .col(side + "/p99_us", "p99 us", "%8.0f")
          .col(side + "/cpu_us_per_batch", "cpu us", "%8.0f");
    }
    t.col("throughput_ratio", "x tput", "%6.2f")
        .col("p99_ratio", "x p99", "%6.2f")
        .col("target", "", "%s");
    for (Map<String, Object> tc : rows) {
      if (tc.get("system").equals("redis")) {
        continue;
      }
      Map<String, Object> redis = redisBeside(rows, tc);
      t.row(
          tc.get("system"),
          num(tc, "batch").intValue(),
          num(tc, "threads").intValue(),
          num(tc, "batches_per_s").longValue(),
          num(tc, "p50_us"),
          num(tc, "p99_us"),
          cpu(tc),
          num(redis, "batches_per_s").longValue(),
          num(redis, "p50_us"),
          num(redis, "p99_us"),
          cpu(redis),
          num(tc, "batches_per_s") / num(redis, "batches_per_s"),
          num(tc, "p99_us") / num(redis, "p99_us"),
          num(tc, "batch").intValue() == 256 ? " (target: x tput >= 2, x p99 <= 1)" : null);
    }
    return t;
  }

  /** Prints {@link #besideRedis} and returns its rows. */
  static List<Map<String, Object>> print(List<Map<String, Object>> rows) {
    List<Map<String, Object>> table = besideRedis(rows).print();
    System.out.println(
        "x tput = TensorCache batches/s / Redis; x p99 = TensorCache p99 / Redis;"
            + " cpu = client + server CPU per batch");
    return table;
  }

  /** At B=256, per transport and thread count: whether the targets are met (never a failure). */
  static Map<String, Object> targets(List<Map<String, Object>> rows) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map<String, Object> tc : rows) {
      if (tc.get("system").equals("redis") || num(tc, "batch").intValue() != 256) {
        continue;
      }
      Map<String, Object> redis = redisBeside(rows, tc);
      double tput = num(tc, "batches_per_s") / num(redis, "batches_per_s");
      double p99 = num(tc, "p99_us") / num(redis, "p99_us");
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("throughput_ratio", Math.round(tput * 100) / 100.0);
      t.put("throughput_target", ">= 2");
      t.put("p99_ratio", Math.round(p99 * 100) / 100.0);
      t.put("p99_target", "<= 1");
      t.put("met", tput >= 2 && p99 <= 1);
      out.put(tc.get("system") + "_" + tc.get("threads") + "_threads", t);
    }
    return out;
  }

  /** Batches/s by B, one bar per system and thread count. */
  static void chart(Path png, List<Map<String, Object>> rows) throws IOException {
    // Redis ran once beside each transport: its bar is the mean of those runs
    Map<String, Map<String, List<Double>>> runs = new LinkedHashMap<>();
    // the largest batch first: its short bars stay clear of the legend in the top left corner
    List<Map<String, Object>> ordered = new java.util.ArrayList<>(rows);
    ordered.sort(java.util.Comparator.comparingInt(r -> -num(r, "batch").intValue()));
    for (Map<String, Object> r : ordered) {
      runs.computeIfAbsent(
              r.get("system") + ", " + r.get("threads") + " thr", k -> new LinkedHashMap<>())
          .computeIfAbsent("B=" + r.get("batch"), k -> new java.util.ArrayList<>())
          .add(num(r, "batches_per_s"));
    }
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    runs.forEach(
        (name, byBatch) -> {
          Map<String, Double> bars = new LinkedHashMap<>();
          byBatch.forEach(
              (b, values) ->
                  bars.put(
                      b, values.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
          series.put(name, bars);
        });
    Charts.bars(png, "Remote lookups: batches/s by batch size (loopback)", "batches/s", series);
  }

  private static Map<String, Object> redisBeside(
      List<Map<String, Object>> rows, Map<String, Object> tc) {
    for (Map<String, Object> r : rows) {
      if (r.get("system").equals("redis")
          && r.get("next_to").equals(tc.get("system"))
          && r.get("batch").equals(tc.get("batch"))
          && r.get("threads").equals(tc.get("threads"))) {
        return r;
      }
    }
    throw new IllegalStateException("no Redis figure beside " + tc);
  }

  private static double cpu(Map<String, Object> row) {
    Object client = row.get("cpu_us_per_batch_client");
    Object server = row.get("cpu_us_per_batch_server");
    return client == null || server == null
        ? Double.NaN
        : ((Number) client).doubleValue() + ((Number) server).doubleValue();
  }

  private static Double num(Map<String, Object> row, String key) {
    Object v = row.get(key);
    return v == null ? Double.NaN : ((Number) v).doubleValue();
  }
}
