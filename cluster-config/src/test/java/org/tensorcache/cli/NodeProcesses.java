package org.tensorcache.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.tensorcache.testing.Reaper;

/**
 * The {@code ./tensorcache} processes of one test, run with the test JVM's class path (never a
 * rebuild), each with its output in a log file; {@link #close} stops those still running: SIGTERM
 * (leave and exit), then SIGKILL.
 */
final class NodeProcesses implements AutoCloseable {
  /** The job options of a small, quick cache. */
  static final List<String> SMALL_JOB =
      List.of(
          "--examples",
          "256",
          "--range-size",
          "64",
          "--micro-batch",
          "16",
          "--embed",
          "16",
          "--hidden",
          "16");

  /** One process and its log. */
  record Started(String name, Process process, Path log) {
    /** The log so far. */
    String text() throws IOException {
      return read(log);
    }

    /** The end of the log, for failure messages. */
    String tail() throws IOException {
      String text = text();
      return text.substring(Math.max(0, text.length() - 4000));
    }
  }

  private final Path dir;
  private final List<Process> processes = new ArrayList<>();

  NodeProcesses(Path dir) {
    this.dir = dir;
  }

  /** Starts {@code ./tensorcache args} with {@code JAVA_OPTS=javaOpts}; logs to NAME.log. */
  Started start(String name, List<String> args, String javaOpts) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of("..", "tensorcache").toAbsolutePath().normalize().toString());
    command.addAll(args);
    Path log = dir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.environment().put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    pb.environment().put("JAVA_OPTS", javaOpts);
    Process p = Reaper.start(pb);
    processes.add(p);
    return new Started(name, p, log);
  }

  /**
   * Waits until the log of {@code s} matches {@code pattern}, at most {@code within}; the match.
   * Throws with the log if the process ends first or the time is up.
   */
  static Matcher await(Started s, Pattern pattern, Duration within)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = pattern.matcher(s.text());
      if (m.find()) {
        return m;
      }
      if (!s.process().isAlive()) {
        Matcher last = pattern.matcher(s.text()); // written just before it ended
        if (last.find()) {
          return last;
        }
        throw new IllegalStateException(
            s.name() + " exited " + s.process().exitValue() + ":\n" + s.text());
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        s.name() + " printed no '" + pattern + "' in " + within.toSeconds() + " s:\n" + s.text());
  }

  static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  @Override
  public void close() throws InterruptedException {
    for (Process p : processes) {
      p.destroy(); // SIGTERM: leave and exit
    }
    for (Process p : processes) {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
