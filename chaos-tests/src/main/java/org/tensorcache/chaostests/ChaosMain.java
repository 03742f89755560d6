package org.tensorcache.chaostests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The chaos run from the command line: {@code ChaosMain [--faults 500] [--seed 1] [--work DIR]};
 * prints the report, writes {@code chaos-report.json} in the work directory, exits 1 on a failure.
 */
public final class ChaosMain {
  private ChaosMain() {}

  /** The job of every chaos run: small enough for two cores, slow enough for faults mid-fill. */
  static final List<String> JOB =
      List.of(
          "--examples",
          "12000",
          "--range-size",
          "256",
          "--micro-batch",
          "16",
          "--embed",
          "32",
          "--hidden",
          "256");

  /** Runs the soak profile. */
  public static void main(String[] args) throws Exception {
    int faults = 500;
    long seed = 1;
    Path work = Files.createTempDirectory("tensorcache-chaos");
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--faults" -> faults = Integer.parseInt(args[i + 1]);
        case "--seed" -> seed = Long.parseLong(args[i + 1]);
        case "--work" -> work = Path.of(args[i + 1]);
        default ->
            throw new IllegalArgumentException(
                "unknown option " + args[i] + ", expected --faults, --seed or --work");
      }
    }
    // each episode adds a whole-cluster kill, two damaged segments and a trainer kill
    int perEpisode = 9;
    int episodes = Math.max(1, (faults + perEpisode + 3) / (perEpisode + 4));
    ChaosRun.Settings settings = new ChaosRun.Settings(seed, episodes, perEpisode, JOB);
    ChaosReport report = new ChaosRun(settings, work, launcher()).run();
    report.print(System.out);
    report.write(work.resolve("chaos-report.json"));
    System.exit(report.ok() ? 0 : 1);
  }

  /** The {@code tensorcache} launcher: property {@code tensorcache.root}, or up from here. */
  static Path launcher() {
    String root = System.getProperty("tensorcache.root");
    List<Path> tried = new ArrayList<>();
    Path dir = root != null ? Path.of(root) : Path.of("").toAbsolutePath();
    for (; dir != null; dir = dir.getParent()) {
      Path script = dir.resolve("tensorcache");
      tried.add(script);
      if (Files.isRegularFile(script) && Files.isExecutable(script)) {
        return script;
      }
    }
    throw new IllegalStateException("no tensorcache launcher found, tried " + tried);
  }
}
