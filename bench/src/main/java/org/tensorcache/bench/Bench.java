package org.tensorcache.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.tensorcache.bench.fixture.RunSize;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The benchmarks' command line; a run never fails on a figure: these machines are noisy. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    version = "tensorcache 0.1.0",
    description =
        "Benchmarks: each figure next to its reference in the same run, written to"
            + " bench/results/<part>.json with PNG charts; never fails on a figure.")
public final class Bench implements Callable<Integer> {
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
              + " else a venv it makes), micro, remote (needs redis-server), tiers (a cache ten"
              + " times the memory budget), scale, objects (segments in S3Proxy), distill (a"
              + " teacher's top-K per token: bytes and error of its storage), security (the"
              + " lookup port and a cluster fill over TLS next to plain TCP).")
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

  public static void main(String[] args) {
    // a benchmark's cluster or client may leave a non-daemon thread behind: end the run anyway
    System.exit(new CommandLine(new Bench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (only != null && !Parts.names().contains(only)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--only " + only + " unknown, expected one of " + Parts.names());
    }
    if (quick && smoke) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--quick and --smoke exclude each other, give one");
    }
    RunSize size = RunSize.of(quick, smoke);
    // a smoke run's figures mean nothing: they never replace those in bench/results
    Path base =
        size == RunSize.SMOKE && (out == null || work == null)
            ? Files.createTempDirectory("tensorcache-smoke-")
            : Path.of("bench");
    out = out != null ? out : base.resolve("results/foundation.json");
    work = work != null ? work : base.resolve("work");
    if (size == RunSize.SMOKE) {
      System.out.println("smoke run: results in " + out.toAbsolutePath().getParent());
    }
    Files.createDirectories(work);
    Part.Run run = new Part.Run(work, out.toAbsolutePath().getParent(), out, size);
    for (Part part : Parts.ALL) {
      if (only == null || only.equals(part.name())) {
        System.out.println("== " + part.heading() + " ==");
        Optional<String> missing = part.needs().get();
        if (missing.isPresent()) {
          System.out.println("left out: " + missing.get());
        } else {
          part.body().run(run);
        }
      }
    }
    return 0;
  }
}
