package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Results;

/**
 * The part's figures as they come in; prints the table with the ratios and targets and the value
 * checks, and writes {@code byo.json} and {@code byo.png}. Targets are printed, never enforced.
 */
final class ByoReport {
  private static final double TARGET_VS_BARE = 0.95;
  private static final double TARGET_VS_EAGER = 1.0;
  private static final String RATE = "fill examples/s";

  private final BenchModel bench;
  private final Map<String, Object> json = new LinkedHashMap<>();
  private final Map<String, Object> threads = new LinkedHashMap<>();
  private final Map<String, Object> profile = new LinkedHashMap<>();
  private Tally bare;
  private Tally fill;
  private Tally eager;
  private Tally other;
  private String otherAttention;
  private float[][] bareValues;
  private float[][] fillValues;
  private float[][] eagerValues;
  private String eagerAttention;
  private String eagerVersions;
  private String eagerLeftOut;

  ByoReport(BenchModel bench, int rows, int microBatch, int chunkRows, boolean quick) {
    this.bench = bench;
    json.put("benchmark", "byo");
    json.put("when", Instant.now().toString());
    json.put("machine", Results.machine());
    json.put("quick", quick);
    json.put("model", bench.info());
    json.put("rows", rows);
    json.put("micro_batch_rows", microBatch);
    json.put("sequences_per_forward", 2 * microBatch);
    json.put("chunk_rows", chunkRows);
  }

  void padS(double seconds) {
    profile.put("bare_padding_all_rows_s", round(seconds, 4));
  }

  void jvmThreads(int intraOp, int interOp, String device) {
    threads.put("jvm_libtorch_intra_op", intraOp);
    threads.put("jvm_libtorch_inter_op", interOp);
    threads.put("jvm_device", device);
  }

  void jvm(Tally bare, float[][] bareValues, Tally fill, NodeFill node) {
    this.bare = bare;
    this.fill = fill;
    this.bareValues = bareValues;
    this.fillValues = node.values();
    threads.put("node_compute_thread_intra_op", node.computeThreads());
    threads.put("node_compute_thread", node.computeThread());
    parts("bare", bare);
    parts("fill", fill);
  }

  void eagerAbout(EagerReference py) {
    eagerAttention = py.attention();
    eagerVersions = py.versions();
    threads.put("python_torch_intra_op", py.threads());
    threads.put("python_torch_inter_op", py.interopThreads());
    json.put("python", eagerVersions + ", " + eagerAttention + " attention, torch.no_grad()");
  }

  void eager(Tally eager, float[][] values) {
    this.eager = eager;
    this.eagerValues = values;
    parts("python", eager);
  }

  void otherAttention(Tally other, String attention) {
    this.other = other;
    this.otherAttention = attention;
  }

  void eagerLeftOut(String why) {
    eager = null;
    eagerLeftOut = why;
    json.put("python_eager_left_out", why);
    System.out.println("(b) left out: " + why);
  }

  private void parts(String side, Tally t) {
    for (var e : t.parts().entrySet()) {
      if (e.getKey().equals("cpu_s")) {
        profile.put(side + "_cpu_us_per_example", Math.round(e.getValue() * 1e6 / t.examples()));
      } else {
        profile.put(side + "_" + e.getKey(), round(e.getValue(), 3));
      }
    }
    profile.put(side + "_seconds", round(t.seconds(), 3));
    if (!t.threadCpu().isEmpty()) {
      Map<String, Double> top = new LinkedHashMap<>();
      t.threadCpu().entrySet().stream()
          .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
          .limit(8)
          .forEach(e -> top.put(e.getKey(), round(e.getValue(), 2)));
      json.put(side + "_cpu_s_by_thread", top);
      System.out.println(side + ": CPU seconds by thread (top 8): " + top);
    }
    json.put(
        side + "_chunk_examples_per_s", t.chunkRates().stream().map(r -> round(r, 3)).toList());
  }

  void printAndWrite(Path resultsDir) throws IOException {
    double t = fill.rate();
    System.out.printf(
        "== bring your own model: %s; %d rows, micro-batch %d rows (%d sequences), chunks of %d"
            + " rows taken by each in turn ==%n",
        bench.describe(),
        fill.examples(),
        json.get("micro_batch_rows"),
        json.get("sequences_per_forward"),
        json.get("chunk_rows"));
    System.out.printf("%-80s %11s %7s %s%n", "figure", "examples/s", "ratio", "target");
    System.out.printf(
        "%-80s %11.2f%n", "(T) TensorCache fill, embedded node, StartFill to all persisted", t);
    json.put("tensorcache_examples_per_s", round(t, 3));
    json.put("bare_djl_examples_per_s", round(bare.rate(), 3));
    Map<String, Object> targets = new LinkedHashMap<>();
    row(
        "(a) bare DJL loop, same TorchScript model and padded batches",
        bare,
        TARGET_VS_BARE,
        "tensorcache_vs_bare_djl",
        targets);
    if (eager != null) {
      json.put("python_eager_examples_per_s", round(eager.rate(), 3));
      row(
          "(b) Python eager, " + eagerVersions + ", " + eagerAttention + " attention",
          eager,
          TARGET_VS_EAGER,
          "tensorcache_vs_python_eager",
          targets);
    } else {
      System.out.printf("%-80s %s%n", "(b) Python eager", "left out: " + eagerLeftOut);
    }
    if (other != null) {
      System.out.printf(
          "%-80s %11.2f %7.3f (no target; measured after, not interleaved)%n",
          "(b') Python eager, "
              + otherAttention
              + " attention, first "
              + other.examples()
              + " rows",
          other.rate(),
          t / other.rate());
      json.put("python_eager_" + otherAttention + "_examples_per_s", round(other.rate(), 3));
      json.put("python_eager_" + otherAttention + "_rows", other.examples());
    }
    json.put("targets", targets);
    System.out.println("threads: " + threads);
    json.put("threads", threads);
    json.put(
        "checks",
        Agreement.check(
            fillValues, bareValues, eager == null ? null : eagerValues, fill.examples()));
    System.out.println("profile (seconds unless named): " + profile);
    json.put("profile", profile);
    Results.write(resultsDir.resolve("byo.json"), json);
    Map<String, Double> bars = new LinkedHashMap<>();
    bars.put("TensorCache", t);
    bars.put("bare DJL loop", bare.rate());
    if (eager != null) {
      bars.put("Python, " + eagerAttention + " attn.", eager.rate());
    }
    if (other != null) {
      bars.put("Python, " + otherAttention + " attn.", other.rate());
    }
    Charts.bars(
        resultsDir.resolve("byo.png"),
        "Bring your own model: DPO reference log-probs, micro-batch "
            + json.get("micro_batch_rows"),
        "examples/s (preference rows)",
        Map.of(RATE, bars));
  }

  private void row(
      String name, Tally reference, double target, String key, Map<String, Object> out) {
    double ratio = fill.rate() / reference.rate();
    boolean met = ratio >= target;
    System.out.printf(
        "%-80s %11.2f %7.3f >= %.2f: %s (per chunk: %s, median %.3f)%n",
        name,
        reference.rate(),
        ratio,
        target,
        met ? "met" : "not met",
        chunkRatios(reference),
        median(chunkRatios(reference)));
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("ratio", round(ratio, 3));
    m.put("chunk_ratios", chunkRatios(reference));
    m.put("median_chunk_ratio", round(median(chunkRatios(reference)), 3));
    m.put("target", target);
    m.put("met", met);
    out.put(key, m);
  }

  /** TensorCache's rate over the reference's, chunk by chunk (the same rows). */
  private List<Double> chunkRatios(Tally reference) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < Math.min(fill.chunkRates().size(), reference.chunkRates().size()); i++) {
      out.add(round(fill.chunkRates().get(i) / reference.chunkRates().get(i), 3));
    }
    return out;
  }

  private static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static double round(double v, int digits) {
    double s = Math.pow(10, digits);
    return Math.round(v * s) / s;
  }
}
