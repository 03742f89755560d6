package org.tensorcache.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The foundation benchmark: reference-runner throughput per micro-batch size, and segment write and
 * read next to writing and reading the same bytes raw. Prints a table and writes {@code
 * bench/results/foundation.json}. Never fails on a figure: these machines are noisy.
 */
public final class FoundationBench {
  private FoundationBench() {}

  /**
   * Usage: {@code FoundationBench [--quick] [--only runner|segments|micro|cluster|byo|remote|scale]
   * [--out FILE] [--work DIR]}; {@code remote} (lookups from a process without a replica next to
   * Redis MGET) needs {@code redis-server} and is left out, saying so, where there is none; {@code
   * byo} (a Hugging Face model of one's own next to a bare DJL loop and PyTorch eager mode) needs
   * Python with torch and transformers ({@code $TENSORCACHE_PYTHON}, else {@code python3}, else a
   * venv it makes) and leaves out what it cannot run, saying so.
   */
  public static void main(String[] args) {
    int code = 0;
    try {
      run(args);
    } catch (Exception | Error e) {
      e.printStackTrace();
      code = 1;
    }
    // a benchmark's cluster or client may leave a non-daemon thread behind: end the run anyway
    System.exit(code);
  }

  private static void run(String[] args) throws Exception {
    boolean quick = false;
    String only = null;
    Path out = Path.of("bench/results/foundation.json");
    Path work = Path.of("bench/work");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--only" -> only = args[++i];
        case "--out" -> out = Path.of(args[++i]);
        case "--work" -> work = Path.of(args[++i]);
        default ->
            throw new IllegalArgumentException(
                "unknown argument '"
                    + args[i]
                    + "', expected --quick, --only"
                    + " runner|segments|micro|cluster|byo|remote|scale,"
                    + " --out FILE or --work DIR");
      }
    }
    Files.createDirectories(work);
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "foundation");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());

    if (only == null || only.equals("runner")) {
      System.out.println("== reference runner (chosen_logp + rejected_logp), examples/s ==");
      results.put("runner", RunnerBench.run(work, quick));
    }
    if (only == null || only.equals("segments")) {
      System.out.println("== segments against raw I/O of the same bytes ==");
      results.put("segments", SegmentBench.run(work.resolve("segments"), quick));
    }

    if (only == null || only.equals("runner") || only.equals("segments")) {
      if (only != null && Files.exists(out)) { // keep the other part's figures of an earlier run
        Map<String, Object> earlier =
            new ObjectMapper()
                .readValue(
                    out.toFile(),
                    new com.fasterxml.jackson.core.type.TypeReference<
                        LinkedHashMap<String, Object>>() {});
        earlier.putAll(results);
        results = earlier;
      }
      Results.write(out, results);
    }
    // before the 10-million-example parts: run after them, the model ran at less than half its
    // speed
    if (only == null || only.equals("cluster")) {
      System.out.println("== embedded cluster next to its references ==");
      Map<String, Object> cluster = new LinkedHashMap<>();
      cluster.put("benchmark", "cluster");
      cluster.put("when", results.get("when"));
      cluster.put("machine", results.get("machine"));
      cluster.put("cluster", ClusterBench.run(work, quick));
      Results.write(out.resolveSibling("cluster.json"), cluster);
    }
    Path resultsDir = out.toAbsolutePath().getParent();
    if (only == null || only.equals("byo")) {
      System.out.println(
          "== bring your own model: a Hugging Face Llama next to a bare DJL loop and PyTorch"
              + " eager ==");
      org.tensorcache.bench.byo.ByoBench.run(work, resultsDir, quick);
    }
    if (only == null || only.equals("micro")) {
      System.out.println("== JMH micro benchmarks: merge, segment codec, reply serialization ==");
      org.tensorcache.bench.micro.MicroBench.run(resultsDir, quick);
    }
    if (only == null || only.equals("remote")) {
      System.out.println("== remote lookups (no replica) next to Redis MGET ==");
      if (onPath("redis-server")) {
        org.tensorcache.bench.remote.RemoteBench.run(work, resultsDir, quick);
      } else {
        System.out.println("left out: no redis-server on the PATH (Debian: apt-get install redis)");
      }
    }
    if (only == null || only.equals("scale")) {
      System.out.println("== memory per cached float, and how costs grow with N and nodes ==");
      org.tensorcache.bench.scale.ScaleBench.run(work, resultsDir, quick);
    }
  }

  private static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }
}
