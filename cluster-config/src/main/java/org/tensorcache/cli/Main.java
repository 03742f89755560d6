package org.tensorcache.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code tensorcache} command line. */
@Command(
    name = "tensorcache",
    mixinStandardHelpOptions = true,
    version = "tensorcache 0.1.0",
    description = "Computes, keeps and serves per-example tensors for ML training.",
    subcommands = {DemoCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
  }
}
