package org.tensorcache.bench.remote;

import static org.tensorcache.bench.remote.Load.cpuPerBatch;
import static org.tensorcache.bench.remote.Load.num;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;

/** The table, the targets and the chart of the remote benchmark's rows. */
final class RemoteReport {
  private RemoteReport() {}

  /**
   * Prints one line per transport, batch and thread count beside the Redis run measured next to it
   * ("cpu": client and server CPU time per batch), and puts it into {@code results} as {@code
   * beside_redis}, after the targets at B=256 per transport and thread count (never a failure).
   */
  static void report(Map<String, Object> results, List<Map<String, Object>> rows) {
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
    Map<String, Object> targets = new LinkedHashMap<>();
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
      boolean met = tput >= 2 && p99 <= 1;
      boolean targeted = num(tc, "batch") == 256;
      if (targeted) {
        Map<String, Object> target = new LinkedHashMap<>();
        target.put("throughput_ratio", rounded(tput));
        target.put("throughput_target", ">= 2");
        target.put("p99_ratio", rounded(p99));
        target.put("p99_target", "<= 1");
        target.put("met", met);
        targets.put(tc.get("system") + "_" + tc.get("threads") + "_threads", target);
      }
      t.row(
          tc.get("system"),
          tc.get("batch"),
          tc.get("threads"),
          (long) num(tc, "batches_per_s"),
          num(tc, "p50_us"),
          num(tc, "p99_us"),
          cpuPerBatch(tc),
          (long) num(redis, "batches_per_s"),
          num(redis, "p50_us"),
          num(redis, "p99_us"),
          cpuPerBatch(redis),
          tput,
          p99,
          targeted
              ? " (target: x tput >= 2, x p99 <= 1: " + (met ? "target met)" : "target missed)")
              : null);
    }
    results.put("targets_at_256", targets);
    results.put("beside_redis", t.print());
    System.out.println(
        "x tput = TensorCache batches/s / Redis; x p99 = TensorCache p99 / Redis;"
            + " cpu = client + server CPU per batch");
  }

  /** A ratio as a target gives it: 0 where either figure is missing. */
  private static double rounded(double ratio) {
    return Double.isFinite(ratio) ? Stats.round2(ratio) : 0;
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
}
