package org.tensorcache.bench.security;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Stats;

/**
 * The security benchmark's summaries (medians over the rounds; a ratio is the median of the rounds'
 * TLS / plain ratios, each pair measured back to back, so that a machine that speeds up or slows
 * down between rounds moves both of a pair), its targets, table and chart.
 */
final class SecurityReport {
  /** TLS may cost the lookup port at most a quarter of its batches/s at B=256. */
  static final double LOOKUP_TARGET = 0.75;

  /** TLS may cost a cluster fill at most 5% of its examples/s. */
  static final double FILL_TARGET = 0.95;

  private SecurityReport() {}

  /** One line per batch size and thread count: plain, TLS and the in-process gather. */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> lookupSummary(Map<String, Object> lookups) {
    List<Map<String, Object>> rows = (List<Map<String, Object>>) lookups.get("rows");
    Map<String, Object> aes = (Map<String, Object>) lookups.get("aes_gcm_us_per_batch");
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> g : rows) {
      if (!g.get("system").equals("gather")) {
        continue;
      }
      Object batch = g.get("batch");
      Object threads = g.get("threads");
      Predicate<Map<String, Object>> same =
          r -> r.get("batch").equals(batch) && r.get("threads").equals(threads);
      List<Map<String, Object>> plain = pick(rows, same, "plain");
      List<Map<String, Object>> tls = pick(rows, same, "tls");
      double[] ratios = ratios(tls, plain, r -> num(r, "batches_per_s"));
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("batch", batch);
      s.put("threads", threads);
      s.put("plain", medians(plain));
      s.put("tls", medians(tls));
      s.put("gather", medians(List.of(g)));
      s.put("ratio_per_round", Arrays.stream(ratios).map(Stats::round2).boxed().toList());
      s.put("ratio", Stats.round2(Stats.median(ratios)));
      // CPU per batch moves less with what else runs on the machine than batches/s do
      s.put("cpu_ratio", Stats.round2(Stats.median(ratios(tls, plain, SecurityReport::cpu))));
      s.put("tls_extra_cpu_us", extraCpu(s));
      s.put("aes_gcm_us", aes.get(batch.toString()));
      // the limit: the same bytes through bare sockets, TLS over plain
      List<Map<String, Object>> echoPlain = pick(rows, same, "echo-plain");
      List<Map<String, Object>> echoTls = pick(rows, same, "echo-tls");
      s.put("echo_plain", medians(echoPlain));
      s.put("echo_tls", medians(echoTls));
      s.put(
          "echo_ratio",
          Stats.round2(Stats.median(ratios(echoTls, echoPlain, r -> num(r, "batches_per_s")))));
      out.add(s);
    }
    return out;
  }

  /** The medians of the fills per transport and of the rounds' TLS / plain ratios. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> fillSummary(Map<String, Object> fill) {
    List<Map<String, Object>> runs = (List<Map<String, Object>>) fill.get("runs");
    List<Map<String, Object>> plain = pick(runs, r -> true, "plain");
    List<Map<String, Object>> tls = pick(runs, r -> true, "tls");
    double[] ratios = ratios(tls, plain, r -> num(r, "examples_per_s"));
    Map<String, Object> s = new LinkedHashMap<>();
    for (String key : List.of("examples_per_s", "cpu_us_per_example")) {
      s.put("plain_" + key, Stats.median(values(plain, key)));
      s.put("tls_" + key, Stats.median(values(tls, key)));
    }
    s.put("ratio_per_round", Arrays.stream(ratios).map(Stats::round2).boxed().toList());
    s.put("ratio", Stats.round2(Stats.median(ratios)));
    double[] cpu = ratios(tls, plain, r -> num(r, "cpu_us_per_example"));
    s.put("cpu_ratio", Stats.round2(Stats.median(cpu)));
    return s;
  }

  /** Adds the summaries to both parts and returns the targets, met or not (never a failure). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> targets(Map<String, Object> lookups, Map<String, Object> fill) {
    lookups.put("summary", lookupSummary(lookups));
    fill.put("summary", fillSummary(fill));
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map<String, Object> s : (List<Map<String, Object>>) lookups.get("summary")) {
      if (num(s, "batch") == 256) {
        out.put(
            "lookup_b256_" + s.get("threads") + "_threads", target(num(s, "ratio"), LOOKUP_TARGET));
      }
    }
    out.put("fill", target(num((Map<String, Object>) fill.get("summary"), "ratio"), FILL_TARGET));
    return out;
  }

  private static Map<String, Object> target(double ratio, double lowest) {
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("ratio_tls_to_plain", ratio);
    t.put("target", ">= " + lowest);
    t.put("met", ratio >= lowest);
    return t;
  }

  /** The tables, each target with "target met" or "target missed". */
  @SuppressWarnings("unchecked")
  static void print(Map<String, Object> results) {
    Map<String, Object> lookups = (Map<String, Object>) results.get("lookups");
    Map<String, Object> fill = (Map<String, Object>) results.get("fill");
    System.out.printf(
        "lookups through the port, N=%,d, median of %s rounds, plain and TLS in turns:%n",
        lookups.get("examples"), lookups.get("rounds"));
    System.out.printf(
        "%4s %3s | %9s %7s %7s %7s | %9s %7s %7s %7s | %9s | %10s | %7s %7s | %12s%n",
        "B",
        "thr",
        "plain b/s",
        "p50 us",
        "p99 us",
        "cpu us",
        "TLS b/s",
        "p50 us",
        "p99 us",
        "cpu us",
        "TLS/plain",
        "echo ratio",
        "+cpu us",
        "gcm us",
        "gather p50us");
    for (Map<String, Object> s : (List<Map<String, Object>>) lookups.get("summary")) {
      Map<String, Object> p = (Map<String, Object>) s.get("plain");
      Map<String, Object> t = (Map<String, Object>) s.get("tls");
      Map<String, Object> g = (Map<String, Object>) s.get("gather");
      System.out.printf(
          "%4d %3d | %9.0f %7.1f %7.1f %7.1f | %9.0f %7.1f %7.1f %7.1f | %9.2f | %10.2f | %7.1f"
              + " %7.1f |"
              + " %12.2f%s%n",
          (int) num(s, "batch"),
          (int) num(s, "threads"),
          num(p, "batches_per_s"),
          num(p, "p50_us"),
          num(p, "p99_us"),
          num(p, "cpu_us_per_batch"),
          num(t, "batches_per_s"),
          num(t, "p50_us"),
          num(t, "p99_us"),
          num(t, "cpu_us_per_batch"),
          num(s, "ratio"),
          num(s, "echo_ratio"),
          num(s, "tls_extra_cpu_us"),
          num(s, "aes_gcm_us"),
          num(g, "p50_us"),
          num(s, "batch") == 256
              ? String.format(
                  "  target >= %.2f: %s",
                  LOOKUP_TARGET, num(s, "ratio") >= LOOKUP_TARGET ? "target met" : "target missed")
              : "");
    }
    System.out.printf(
        "TLS/plain: batches/s, the median of the rounds' ratios; cpu: client + server CPU per"
            + " batch, +cpu TLS's less plain's; gcm: request and reply sealed and opened with"
            + " AES-256-GCM alone; TLS = %s, client certificate and token; echo ratio: the same"
            + " request and reply bytes through a bare TLS socket over a bare plain one, no cache"
            + " (the limit); gather: the same batch from arrays in the client's own process%n",
        lookups.get("cipher_suite"));
    Map<String, Object> c = (Map<String, Object>) lookups.get("connects");
    System.out.printf(
        "a new client's connection and first lookup (B=32), median of %s: plain %.2f ms, TLS %.2f"
            + " ms%n",
        c.get("times"),
        num((Map<String, Object>) c.get("plain"), "median_ms"),
        num((Map<String, Object>) c.get("tls"), "median_ms"));

    Map<String, Object> f = (Map<String, Object>) fill.get("summary");
    System.out.printf(
        "cluster fill, %,d examples on %s nodes, median of %d: Artery TCP %,.0f examples/s (CPU"
            + " %.2f us/example), Artery TLS %,.0f examples/s (%.2f us/example); TLS/plain %.2f %s"
            + " (target >= %.2f: %s); CPU per example (this JVM, both nodes) TLS/plain %.2f%n",
        ((Number) fill.get("examples")).intValue(),
        fill.get("nodes"),
        ((List<?>) fill.get("runs")).size() / 2,
        num(f, "plain_examples_per_s"),
        num(f, "plain_cpu_us_per_example"),
        num(f, "tls_examples_per_s"),
        num(f, "tls_cpu_us_per_example"),
        num(f, "ratio"),
        f.get("ratio_per_round"),
        FILL_TARGET,
        num(f, "ratio") >= FILL_TARGET ? "target met" : "target missed",
        num(f, "cpu_ratio"));
    System.out.printf(
        "load average (1 min) before and after: %s on %s cores%n",
        results.get("load_average_1m"),
        ((Map<String, Object>) results.get("machine")).get("cores"));
  }

  /** TLS / plain per figure, next to its target where it has one. */
  @SuppressWarnings("unchecked")
  static void chart(Path png, Map<String, Object> lookups, Map<String, Object> fill)
      throws IOException {
    Map<String, Double> ratio = new LinkedHashMap<>();
    Map<String, Double> target = new LinkedHashMap<>();
    Map<String, Double> echo = new LinkedHashMap<>();
    for (Map<String, Object> s : (List<Map<String, Object>>) lookups.get("summary")) {
      String name = "B=" + s.get("batch") + ", " + s.get("threads") + " thr";
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

  /** A run's CPU per batch, client and server together. */
  private static double cpu(Map<String, Object> run) {
    return num(run, "cpu_us_per_batch_client") + num(run, "cpu_us_per_batch_server");
  }

  /** TLS's CPU per batch less plain's, in microseconds. */
  @SuppressWarnings("unchecked")
  private static double extraCpu(Map<String, Object> summary) {
    double tls = num((Map<String, Object>) summary.get("tls"), "cpu_us_per_batch");
    double plain = num((Map<String, Object>) summary.get("plain"), "cpu_us_per_batch");
    return Stats.round1(tls - plain);
  }

  private static List<Map<String, Object>> pick(
      List<Map<String, Object>> rows, Predicate<Map<String, Object>> same, String system) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      if (r.get("system").equals(system) && same.test(r)) {
        out.add(r);
      }
    }
    out.sort((a, b) -> Double.compare(num(a, "round"), num(b, "round")));
    return out;
  }

  /** The medians of a configuration's rounds: batches/s, latency and CPU per batch. */
  private static Map<String, Object> medians(List<Map<String, Object>> runs) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("batches_per_s", Math.round(Stats.median(values(runs, "batches_per_s"))));
    m.put("p50_us", Stats.round1(Stats.median(values(runs, "p50_us"))));
    m.put("p99_us", Stats.round1(Stats.median(values(runs, "p99_us"))));
    double c = Stats.median(runs.stream().mapToDouble(SecurityReport::cpu).toArray());
    m.put("cpu_us_per_batch", Double.isNaN(c) ? null : Stats.round1(c));
    return m;
  }

  private static double[] values(List<Map<String, Object>> runs, String key) {
    return runs.stream().mapToDouble(r -> num(r, key)).toArray();
  }

  private static double num(Map<String, Object> row, String key) {
    Object v = row.get(key);
    return v == null ? Double.NaN : ((Number) v).doubleValue();
  }
}
