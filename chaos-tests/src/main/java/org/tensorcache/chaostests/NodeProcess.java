package org.tensorcache.chaostests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.tensorcache.testing.Reaper;

/** One {@code ./tensorcache node} process: its port, its log file and the signals sent to it. */
final class NodeProcess {
  private final String name;
  private final int port;
  private final Path log;
  private final Process process;

  private NodeProcess(String name, int port, Path log, Process process) {
    this.name = name;
    this.port = port;
    this.log = log;
    this.process = process;
  }

  /**
   * Starts {@code launcher node ...} with {@code env} added; stdout and stderr go to {@code log}.
   */
  static NodeProcess start(
      String name, int port, Path launcher, List<String> args, Map<String, String> env, Path log)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(launcher.toString());
    command.add("node");
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
    pb.environment().putAll(env);
    return new NodeProcess(name, port, log, Reaper.start(pb));
  }

  /** The names of {@code nodes}, comma-separated, for reports and logs. */
  static String names(java.util.List<NodeProcess> nodes) {
    return String.join(",", nodes.stream().map(NodeProcess::name).toList());
  }

  String name() {
    return name;
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Waits until the log has a line containing {@code text}; fails if the process ends first. */
  void awaitLine(String text, Duration within) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      if (logText().contains(text)) {
        return;
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            name + " exited with " + process.exitValue() + " before '" + text + "' (" + log + ")");
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        name + " printed no '" + text + "' within " + within.toSeconds() + " s (" + log + ")");
  }

  /** The log so far. */
  String logText() throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  /** Sends {@code signal} (TERM, STOP, CONT) with {@code kill -s}. */
  void signal(String signal) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(pid())).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -s " + signal + " " + pid() + " failed");
    }
  }

  /** SIGKILL. */
  void kill() {
    process.destroyForcibly();
  }

  /** Waits for the exit, at most {@code within}; the exit code, or -1 if it still runs. */
  int awaitExit(Duration within) throws InterruptedException {
    return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
  }

  /** SIGCONT (a stopped process cannot die otherwise) and SIGKILL, then waits (bounded). */
  void forceStop() {
    try {
      if (process.isAlive()) {
        new ProcessBuilder("kill", "-s", "CONT", Long.toString(pid()))
            .start()
            .waitFor(5, TimeUnit.SECONDS);
      }
    } catch (IOException | InterruptedException e) {
      // SIGKILL follows anyway
    }
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
