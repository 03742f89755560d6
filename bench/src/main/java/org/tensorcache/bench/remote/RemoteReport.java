package org.tensorcache.bench.remote;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Table;

/** The table, the targets and the chart of the remote benchmark's rows. */
final class RemoteReport {
  private RemoteReport() {}

  /**
   * Prints one line per transport, batch and thread count beside the Redis run measured next to it
   * ("cpu": client and server CPU time per batch); returns the table's rows.
   */
  static List<Map<String, Object>> print(List<Map<String, Object>> rows) {
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
      Map<String, Object> redis =
          rows.stream()
              .filter(r -> r.get("system").equals("redis"))
              .filter(r -> r.get("next_to").equals(tc.get("system")))
              .filter(r -> r.get("batch").equals(tc.get("batch")))
              .filter(r -> r.get("threads").equals(tc.get("threads")))
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("no Redis figure beside " + tc));
      double tput = num(tc, "batches_per_s") / num(redis, "batches_per_s");
      double p99 = num(tc, "p99_us") / num(redis, "p99_us");
      String met = tput >= 2 && p99 <= 1 ? "target met" : "target missed";
      t.row(
          tc.get("system"),
          tc.get("batch"),
          tc.get("threads"),
          num(tc, "batches_per_s").longValue(),
          num(tc, "p50_us"),
          num(tc, "p99_us"),
          cpu(tc),
          num(redis, "batches_per_s").longValue(),
          num(redis, "p50_us"),
          num(redis, "p99_us"),
          cpu(redis),
          tput,
          p99,
          num(tc, "batch") == 256 ? " (target: x tput >= 2, x p99 <= 1: " + met + ")" : null);
    }
    List<Map<String, Object>> table = t.print();
    System.out.println(
        "x tput = TensorCache batches/s / Redis; x p99 = TensorCache p99 / Redis;"
            + " cpu = client + server CPU per batch");
    return table;
  }

  /** At B=256, per transport and thread count: whether the targets are met (never a failure). */
  static Map<String, Object> targets(List<Map<String, Object>> besideRedis) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map<String, Object> r : besideRedis) {
      if (num(r, "batch") == 256) {
        double tput = num(r, "throughput_ratio");
        double p99 = num(r, "p99_ratio");
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("throughput_ratio", Math.round(tput * 100) / 100.0);
        t.put("throughput_target", ">= 2");
        t.put("p99_ratio", Math.round(p99 * 100) / 100.0);
        t.put("p99_target", "<= 1");
        t.put("met", tput >= 2 && p99 <= 1);
        out.put(r.get("system") + "_" + r.get("threads") + "_threads", t);
      }
    }
    return out;
  }

  /** Batches/s by B, one bar per system and thread count; Redis's the mean of its runs. */
  static void chart(Path png, List<Map<String, Object>> rows) throws IOException {
    // the largest batch first: its short bars stay clear of the legend in the top left corner
    Map<String, Map<String, Double>> series =
        rows.stream()
            .sorted(Comparator.comparingDouble(r -> -num(r, "batch")))
            .collect(
                Collectors.groupingBy(
                    r -> r.get("system") + ", " + r.get("threads") + " thr",
                    LinkedHashMap::new,
                    Collectors.groupingBy(
                        r -> "B=" + r.get("batch"),
                        LinkedHashMap::new,
                        Collectors.averagingDouble(r -> num(r, "batches_per_s")))));
    Charts.bars(png, "Remote lookups: batches/s by batch size (loopback)", "batches/s", series);
  }

  private static double cpu(Map<String, Object> row) {
    return num(row, "cpu_us_per_batch_client") + num(row, "cpu_us_per_batch_server");
  }

  private static Double num(Map<String, Object> row, String key) {
    Object v = row.get(key);
    return v == null ? Double.NaN : ((Number) v).doubleValue();
  }
}
