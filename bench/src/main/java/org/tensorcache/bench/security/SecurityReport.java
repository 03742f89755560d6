package org.tensorcache.bench.security;

import static org.tensorcache.bench.remote.Load.num;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import org.tensorcache.bench.remote.Load;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;

/**
 * The security benchmark's tables (medians over the rounds; a ratio is the median of the rounds'
 * TLS / plain ratios, each pair measured back to back, so that a machine that speeds up or slows
 * down between rounds moves both of a pair), its targets and chart.
 */
final class SecurityReport {
  /** TLS may cost the lookup port at most a quarter of its batches/s at B=256. */
  static final double LOOKUP_TARGET = 0.75;

  /** TLS may cost a cluster fill at most 5% of its examples/s. */
  static final double FILL_TARGET = 0.95;

  private SecurityReport() {}

  /**
   * One line per batch size and thread count: plain, TLS, the bare sockets' echo of the same bytes
   * (the limit) and the in-process gather, each the medians of its rounds, and the ratios.
   */
  @SuppressWarnings("unchecked")
  static Table lookupTable(Map<String, Object> lookups) {
    Table t = new Table(null).col("batch", "B", "%4d").col("threads", "thr", "%3d");
    for (String side : List.of("plain", "tls")) {
      t.col(side + "/batches_per_s", side.equals("plain") ? "plain b/s" : "TLS b/s", "%9d")
          .col(side + "/p50_us", "p50 us", "%7.1f")
          .col(side + "/p99_us", "p99 us", "%7.1f")
          .col(side + "/cpu_us_per_batch", "cpu us", "%7.1f");
    }
    t.col("ratio", "TLS/plain", "%9.2f")
        .json("ratio_per_round")
        .json("cpu_ratio")
        .col("echo_ratio", "echo ratio", "%10.2f")
        .col("tls_extra_cpu_us", "+cpu us", "%7.1f")
        .col("aes_gcm_us", "gcm us", "%7.1f");
    for (String side : List.of("gather", "echo_plain", "echo_tls")) {
      t.json(side + "/batches_per_s");
      if (side.equals("gather")) {
        t.col("gather/p50_us", "gather p50us", "%12.2f");
      } else {
        t.json(side + "/p50_us");
      }
      t.json(side + "/p99_us").json(side + "/cpu_us_per_batch");
    }
    t.col("target", "", "%s");
    List<Map<String, Object>> rows = (List<Map<String, Object>>) lookups.get("rows");
    Map<String, Object> aes = (Map<String, Object>) lookups.get("aes_gcm_us_per_batch");
    // each configuration's runs, in the order of their rounds
    Map<String, List<Map<String, Object>>> runs =
        rows.stream().collect(Collectors.groupingBy(r -> r.get("system") + configuration(r)));
    for (Map<String, Object> g : rows) {
      if (!g.get("system").equals("gather")) {
        continue;
      }
      String c = configuration(g);
      List<Map<String, Object>> plain = runs.get("plain" + c);
      List<Map<String, Object>> tls = runs.get("tls" + c);
      double[] ratios = ratios(tls, plain, "batches_per_s");
      double ratio = Stats.median(ratios);
      List<Object> row = new ArrayList<>(List.of(g.get("batch"), g.get("threads")));
      row.addAll(medians(plain));
      row.addAll(medians(tls));
      row.add(ratio);
      row.add(Arrays.stream(ratios).map(Stats::round2).boxed().toList());
      // CPU per batch moves less with what else runs on the machine than batches/s do
      row.add(Stats.median(ratios(tls, plain, Load::cpuPerBatch)));
      var echoTls = runs.get("echo-tls" + c);
      row.add(Stats.median(ratios(echoTls, runs.get("echo-plain" + c), "batches_per_s")));
      row.add(median(tls, Load::cpuPerBatch) - median(plain, Load::cpuPerBatch));
      row.add(aes.get(g.get("batch").toString()));
      for (String side : List.of("gather", "echo-plain", "echo-tls")) {
        row.addAll(medians(runs.get(side + c)));
      }
      boolean targeted = num(g, "batch") == 256;
      row.add(targeted ? " target >= " + LOOKUP_TARGET + ": " + met(ratio >= LOOKUP_TARGET) : null);
      t.row(row.toArray());
    }
    return t;
  }

  private static String configuration(Map<String, Object> run) {
    return " B=" + run.get("batch") + ", " + run.get("threads") + " thr";
  }

  /** The medians of a configuration's rounds: batches/s, p50 and p99 us, CPU us per batch. */
  private static List<Object> medians(List<Map<String, Object>> runs) {
    return List.of(
        Math.round(median(runs, "batches_per_s")),
        median(runs, "p50_us"),
        median(runs, "p99_us"),
        median(runs, Load::cpuPerBatch));
  }

  /**
   * The fills' medians per transport and TLS / plain: the median of the rounds' ratios, each
   * round's, and the same of CPU per example (this JVM, both nodes).
   */
  @SuppressWarnings("unchecked")
  static Table fillTable(Map<String, Object> fill) {
    List<Map<String, Object>> runs = (List<Map<String, Object>>) fill.get("runs");
    var plain = runs.stream().filter(r -> r.get("system").equals("plain")).toList();
    var tls = runs.stream().filter(r -> r.get("system").equals("tls")).toList();
    double[] ratios = ratios(tls, plain, "examples_per_s");
    double ratio = Stats.median(ratios);
    String title =
        String.format(
            "cluster fill, %,d examples on %s nodes, median of %d; cpu: us per example, this JVM"
                + " (both nodes)",
            (long) num(fill, "examples"), fill.get("nodes"), plain.size());
    return new Table(title)
        .col("plain_examples_per_s", "TCP examples/s", "%14.0f")
        .col("plain_cpu_us_per_example", "cpu us", "%6.2f")
        .col("tls_examples_per_s", "TLS examples/s", "%14.0f")
        .col("tls_cpu_us_per_example", "cpu us", "%6.2f")
        .col("ratio", "TLS/plain", "%9.2f")
        .col("ratio_per_round", "rounds", "%s")
        .col("cpu_ratio", "cpu TLS/plain", "%13.2f")
        .col("target", "", "%s")
        .row(
            median(plain, "examples_per_s"),
            median(plain, "cpu_us_per_example"),
            median(tls, "examples_per_s"),
            median(tls, "cpu_us_per_example"),
            ratio,
            Arrays.stream(ratios).map(Stats::round2).boxed().toList(),
            Stats.median(ratios(tls, plain, "cpu_us_per_example")),
            " target >= " + FILL_TARGET + ": " + met(ratio >= FILL_TARGET));
  }

  /**
   * Prints the tables and their legends, each target with "target met" or "target missed", and adds
   * each table to its part as its {@code summary}; returns the targets (never a failure).
   */
  @SuppressWarnings("unchecked")
  static Map<String, Object> report(Map<String, Object> results) {
    Map<String, Object> lookups = (Map<String, Object>) results.get("lookups");
    Map<String, Object> fill = (Map<String, Object>) results.get("fill");
    System.out.printf(
        "lookups through the port, N=%,d, median of %s rounds, plain and TLS in turns:%n",
        lookups.get("examples"), lookups.get("rounds"));
    lookups.put("summary", lookupTable(lookups).print());
    System.out.printf(
        "TLS/plain: batches/s, the median of the rounds' ratios; cpu: client + server CPU per"
            + " batch, +cpu TLS's less plain's; gcm: request and reply sealed and opened with"
            + " AES-256-GCM alone; TLS = %s, client certificate and token; echo ratio: the same"
            + " request and reply bytes through a bare TLS socket over a bare plain one, no cache"
            + " (the limit); gather: the same batch from arrays in the client's own process%n",
        lookups.get("cipher_suite"));
    Map<String, Map<String, Object>> c = (Map<String, Map<String, Object>>) lookups.get("connects");
    System.out.printf(
        "a new client's connection and first lookup (B=32), median of %s: plain %.2f ms, TLS %.2f"
            + " ms%n",
        c.get("times"), num(c.get("plain"), "median_ms"), num(c.get("tls"), "median_ms"));
    fill.put("summary", fillTable(fill).print().get(0));
    System.out.printf(
        "load average (1 min) before and after: %s on %s cores%n",
        results.get("load_average_1m"),
        ((Map<String, Object>) results.get("machine")).get("cores"));
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map<String, Object> s : (List<Map<String, Object>>) lookups.get("summary")) {
      if (num(s, "batch") == 256) {
        out.put("lookup_b256_" + s.get("threads") + "_threads", target(s, LOOKUP_TARGET));
      }
    }
    out.put("fill", target((Map<String, Object>) fill.get("summary"), FILL_TARGET));
    return out;
  }

  private static Map<String, Object> target(Map<String, Object> summary, double lowest) {
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("ratio_tls_to_plain", Stats.round2(num(summary, "ratio")));
    t.put("target", ">= " + lowest);
    t.put("met", num(summary, "ratio") >= lowest);
    return t;
  }

  private static String met(boolean met) {
    return met ? "target met" : "target missed";
  }

  /** TLS / plain per figure, next to its target where it has one. */
  @SuppressWarnings("unchecked")
  static void chart(Path png, Map<String, Object> lookups, Map<String, Object> fill)
      throws IOException {
    Map<String, Double> ratio = new LinkedHashMap<>();
    Map<String, Double> target = new LinkedHashMap<>();
    Map<String, Double> echo = new LinkedHashMap<>();
    for (Map<String, Object> s : (List<Map<String, Object>>) lookups.get("summary")) {
      String name = configuration(s).substring(1);
      ratio.put(name, num(s, "ratio"));
      echo.put(name, num(s, "echo_ratio"));
      target.put(name, num(s, "batch") == 256 ? LOOKUP_TARGET : 0.0);
    }
    String name = "fill, " + fill.get("nodes") + " nodes";
    ratio.put(name, num((Map<String, Object>) fill.get("summary"), "ratio"));
    target.put(name, FILL_TARGET);
    echo.put(name, 0.0);
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    series.put("TLS / plain TCP (median of the rounds)", ratio);
    series.put("bare TLS socket / bare plain socket, same bytes (the limit)", echo);
    series.put("target: at least", target);
    Charts.bars(
        png,
        "TLS 1.3 next to plain TCP: lookup port batches/s and cluster fill examples/s",
        "TLS / plain",
        series);
  }

  /** Per round, TLS's {@code figure} over plain's (the two measured back to back). */
  private static double[] ratios(
      List<Map<String, Object>> tls,
      List<Map<String, Object>> plain,
      ToDoubleFunction<Map<String, Object>> figure) {
    double[] out = new double[plain.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = figure.applyAsDouble(tls.get(i)) / figure.applyAsDouble(plain.get(i));
    }
    return out;
  }

  private static double[] ratios(
      List<Map<String, Object>> tls, List<Map<String, Object>> plain, String key) {
    return ratios(tls, plain, r -> num(r, key));
  }

  private static double median(
      List<Map<String, Object>> runs, ToDoubleFunction<Map<String, Object>> figure) {
    return Stats.median(runs.stream().mapToDouble(figure).toArray());
  }

  private static double median(List<Map<String, Object>> runs, String key) {
    return median(runs, r -> num(r, key));
  }
}
