package org.tensorcache.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.testing.S3ProxyServer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The foundation benchmark: reference-runner throughput per micro-batch size, and segment write and
 * read next to writing and reading the same bytes raw. Prints a table and writes {@code
 * bench/results/foundation.json}. Never fails on a figure: these machines are noisy.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    version = "tensorcache 0.1.0",
    description =
        "Benchmarks: each figure next to its reference in the same run, written to"
            + " bench/results/<part>.json with PNG charts; never fails on a figure.")
public final class FoundationBench implements Callable<Integer> {
  /** The parts, in the order a full run takes them. */
  static final List<String> PARTS =
      List.of(
          "runner",
          "segments",
          "cluster",
          "byo",
          "micro",
          "remote",
          "tiers",
          "scale",
          "security",
          "objects");

  @Option(names = "--quick", description = "Smaller runs (a few minutes in all).")
  boolean quick;

  @Option(
      names = "--smoke",
      description =
          "Tiny runs, a few seconds per part, whose figures mean nothing: checks that every part"
              + " runs and writes its results. Results and scratch go to a new temporary directory"
              + " unless --out or --work is given.")
  boolean smoke;

  @Option(
      names = "--only",
      paramLabel = "PART",
      description =
          "One part: runner, segments, cluster, byo (your own model next to TRL's precompute;"
              + " needs Python with torch, transformers and TRL: TENSORCACHE_PYTHON, else python3,"
              + " else a venv it makes), micro,"
              + " remote (needs redis-server), tiers (a cache ten times the memory budget), scale,"
              + " security (the lookup port and a cluster fill over TLS next to plain TCP).")
  String only;

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description =
          "Results of the runner and segment parts; the others go beside it (default:"
              + " bench/results/foundation.json).")
  Path out;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description = "Scratch directory (default: bench/work).")
  Path work;

  /**
   * Usage: {@code FoundationBench [--quick | --smoke] [--only PART] [--out FILE] [--work DIR]},
   * PART one of {@link #PARTS}; {@code --smoke} runs each part in a few seconds (figures that mean
   * nothing) into a temporary directory, to check that it runs; {@code security} (the lookup port
   * and a cluster fill with TLS next to plain TCP) writes {@code security.json} and {@code
   * security.png}; {@code tiers} (a cache ten times the hot tier's budget: fills, a trainer's steps
   * with and without prefetch, all in memory, random lookups) writes {@code tiers.json} and {@code
   * tiers.png}; {@code remote} (lookups from a process without a replica next to Redis MGET) needs
   * {@code redis-server} and is left out, saying so, where there is none; {@code byo} (a Hugging
   * Face model of one's own: the fill next to TRL's own reference precompute and a bare DJL loop)
   * needs Python with torch, transformers and TRL ({@code $TENSORCACHE_PYTHON}, else {@code
   * python3}, else a venv it makes) and leaves out what it cannot run, saying so.
   */
  public static void main(String[] args) {
    int code =
        new CommandLine(new FoundationBench())
            .setExecutionExceptionHandler(
                (e, cmd, parsed) -> {
                  e.printStackTrace();
                  return 1;
                })
            .execute(args);
    // a benchmark's cluster or client may leave a non-daemon thread behind: end the run anyway
    System.exit(code);
  }

  @Override
  public Integer call() throws Exception {
    if (only != null && !PARTS.contains(only)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--only " + only + " unknown, expected one of " + PARTS);
    }
    if (quick && smoke) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--quick and --smoke exclude each other, give one");
    }
    RunSize size = RunSize.of(quick, smoke);
    // a smoke run's figures mean nothing: they never replace those in bench/results
    Path scratch =
        size == RunSize.SMOKE && (out == null || work == null)
            ? Files.createTempDirectory("tensorcache-smoke-")
            : null;
    if (out == null) {
      out =
          scratch != null
              ? scratch.resolve("results/foundation.json")
              : Path.of("bench/results/foundation.json");
    }
    if (work == null) {
      work = scratch != null ? scratch.resolve("work") : Path.of("bench/work");
    }
    if (size == RunSize.SMOKE) {
      System.out.println("smoke run: results in " + out.toAbsolutePath().getParent());
    }
    run(size);
    return 0;
  }

  private void run(RunSize size) throws Exception {
    Files.createDirectories(work);
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "foundation");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());

    if (only == null || only.equals("runner")) {
      System.out.println("== reference runner (chosen_logp + rejected_logp), examples/s ==");
      results.put("runner", RunnerBench.run(work, size));
    }
    if (only == null || only.equals("segments")) {
      System.out.println("== segments against raw I/O of the same bytes ==");
      results.put("segments", SegmentBench.run(work.resolve("segments"), size));
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
      cluster.put("size", size.label());
      cluster.put("cluster", ClusterBench.run(work, size));
      Results.write(out.resolveSibling("cluster.json"), cluster);
    }
    Path resultsDir = out.toAbsolutePath().getParent();
    if (only == null || only.equals("byo")) {
      System.out.println(
          "== bring your own model: TensorCache's fill next to TRL's own precompute and a bare"
              + " DJL loop ==");
      org.tensorcache.bench.byo.ByoBench.run(work, resultsDir, size);
    }
    if (only == null || only.equals("micro")) {
      System.out.println("== JMH micro benchmarks: merge, segment codec, reply serialization ==");
      org.tensorcache.bench.micro.MicroBench.run(resultsDir, size);
    }
    if (only == null || only.equals("remote")) {
      System.out.println("== remote lookups (no replica) next to Redis MGET ==");
      if (onPath("redis-server")) {
        org.tensorcache.bench.remote.RemoteBench.run(work, resultsDir, size);
      } else {
        System.out.println("left out: no redis-server on the PATH (Debian: apt-get install redis)");
      }
    }
    if (only == null || only.equals("tiers")) {
      System.out.println(
          "== memory tiers: a cache ten times the node's budget, in trainer and random order ==");
      TiersBench.run(work, resultsDir, size);
    }
    if (only == null || only.equals("scale")) {
      System.out.println("== memory per cached float, and how costs grow with N and nodes ==");
      org.tensorcache.bench.scale.ScaleBench.run(work, resultsDir, size);
    }
    if (only == null || only.equals("objects")) {
      System.out.println(
          "== segments in object storage (S3Proxy on loopback) next to a local directory and"
              + " plain objects ==");
      if (S3ProxyServer.findJar().isPresent()) {
        org.tensorcache.bench.objects.ObjectStoreBench.run(work, resultsDir, size);
      } else {
        System.out.println(
            "left out: no S3Proxy jar (mvn -B test -pl persistence fetches it into ~/.m2)");
      }
    }
    if (only == null || only.equals("security")) {
      System.out.println(
          "== TLS next to plain TCP: lookups through the lookup port, a cluster fill over Artery ==");
      org.tensorcache.bench.security.SecurityBench.run(work, resultsDir, size);
    }
  }

  /** Whether {@code program} is an executable in a directory of the PATH. */
  static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }
}
