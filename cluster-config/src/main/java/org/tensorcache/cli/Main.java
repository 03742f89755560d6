package org.tensorcache.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.launch.DnsLookup;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code tensorcache} command line. */
@Command(
    name = "tensorcache",
    mixinStandardHelpOptions = true,
    version = "tensorcache 0.1.0",
    description = "Computes, keeps and serves per-example tensors for ML training.",
    footer = {
      "",
      "The launcher also runs:",
      "  bench   benchmarks next to their references (bench --help)",
      "  chaos   fault injection against real node processes (chaos --help)",
      "  s3-local  a local S3-compatible server to try --segments s3:// (s3-local --help)"
    },
    subcommands = {
      DemoCommand.class,
      NodeCommand.class,
      StatusCommand.class,
      FillCommand.class,
      ExportCommand.class,
      CacheIdCommand.class,
      CertsCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  static {
    // before anything looks a name up: the JVM reads its DNS cache times once
    DnsLookup.shortenJvmCache();
  }

  private static final Logger log = LoggerFactory.getLogger(Main.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line with its error handling: a bad input is one line naming it, exit code 1. */
  static CommandLine commandLine() {
    return HelpSections.groupsFirst(new CommandLine(new Main()))
        .setExecutionExceptionHandler(
            (e, cmd, parsed) -> {
              log.debug("command failed", e);
              cmd.getErr().println("tensorcache " + cmd.getCommandName() + ": " + describe(e));
              return 1;
            });
  }

  private static String describe(Exception e) {
    return e.getMessage() != null ? e.getMessage() : e.toString();
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
  }
}
