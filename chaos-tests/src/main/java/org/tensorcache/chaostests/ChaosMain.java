package org.tensorcache.chaostests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The chaos run from the command line: {@code tensorcache chaos [--faults 500] [--seed 1] [--work
 * DIR]}; prints the report, writes {@code chaos-report.json} in the work directory, exits 1 on a
 * failure.
 */
@Command(
    name = "chaos",
    mixinStandardHelpOptions = true,
    version = "tensorcache 0.1.0",
    description =
        "Fault injection against real node processes on this machine (the soak profile): seeded"
            + " kills, stops and damaged segments during fills; outages of object storage and of"
            + " the journal, and whole-cluster preemptions without local disks; every value and"
            + " trainer batch checked.")
public final class ChaosMain implements Callable<Integer> {
  @Option(
      names = "--faults",
      defaultValue = "500",
      description = "How many faults to inject (default: ${DEFAULT-VALUE}).")
  int faults;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of the faults (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description = "Work directory (default: a new temporary one).")
  Path work;

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

  /** Runs the soak profile; {@code --help} prints the usage and starts nothing. */
  public static void main(String[] args) {
    CommandLine cli =
        new CommandLine(new ChaosMain())
            .setExecutionExceptionHandler(
                (e, cmd, parsed) -> {
                  if (!(e instanceof IllegalArgumentException)) {
                    throw e;
                  }
                  cmd.getErr().println("tensorcache chaos: " + e.getMessage());
                  return 2;
                });
    System.exit(cli.execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (faults < 1) {
      throw new IllegalArgumentException("--faults " + faults + ": expected >= 1");
    }
    Path work = this.work != null ? this.work : Files.createTempDirectory("tensorcache-chaos");
    // each episode's fill meets two partitions and a mass preemption besides, and the episode adds
    // a whole-cluster kill, two damaged segments and a trainer kill
    int perEpisode = 9;
    int all = perEpisode + 2 + 1 + 4;
    int episodes = Math.max(1, (faults + all - 1) / all);
    // and, every four episodes, one on a cluster without a shared disk: the object store and the
    // journal stopped mid-fill, the whole cluster preempted with its disks
    ChaosRun.Settings settings =
        new ChaosRun.Settings(
            seed,
            episodes,
            perEpisode,
            2,
            episodes,
            Math.max(1, episodes / 4),
            Set.copyOf(CloudEpisode.OUTAGES),
            JOB);
    ChaosReport report = new ChaosRun(settings, work, launcher()).run();
    report.print(System.out);
    report.write(work.resolve("chaos-report.json"));
    return report.ok() ? 0 : 1;
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
