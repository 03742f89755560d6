package org.tensorcache.testing;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ends what a JVM's tests, chaos runs and benchmarks start (server processes, detached servers,
 * temporary directories) when that JVM ends: at a normal exit and on SIGTERM or SIGINT through a
 * shutdown hook, and on SIGKILL through a watchdog, one {@code sh} per JVM, started at the first
 * registration, that polls the JVM every second and, once it is gone, runs the same cleanup.
 *
 * <p>Every registration is one line of a cleanup script ({@code $TMPDIR/tensorcache-reaper-PID/
 * cleanup.sh}), rewritten at each change: processes and stop commands are ended newest first, then
 * the directories are removed. A starter closes its {@link Registration} when it stops the thing
 * itself; a process's registration closes itself when the process exits. Linux only ({@code
 * /proc}).
 */
public final class Reaper {
  private static final Reaper INSTANCE = new Reaper();

  /** What the JVM's end does: each registration is one line of the cleanup script. */
  public interface Registration extends AutoCloseable {
    /** Forgets the registration: the JVM's end leaves that thing alone. */
    @Override
    void close();
  }

  private final Map<Long, String> stops = new LinkedHashMap<>();
  private final Map<Long, String> directories = new LinkedHashMap<>();
  private long next;
  private Path dir;

  private Reaper() {}

  /** Starts {@code pb} and registers the process (and its descendants) to end with the JVM. */
  public static Process start(ProcessBuilder pb) throws IOException {
    Process p = pb.start();
    process(p);
    return p;
  }

  /**
   * Registers {@code p} and its descendants: SIGTERM when the JVM ends, SIGKILL 5 s later; the
   * registration ends by itself when {@code p} exits.
   */
  public static Registration process(Process p) {
    Registration r = INSTANCE.add(INSTANCE.stops, ReaperScript.reap(p.pid(), startTime(p.pid())));
    p.onExit().thenRun(r::close);
    return r;
  }

  /**
   * Registers a detached server (one not a child of this JVM, such as PostgreSQL's postmaster
   * started by {@code pg_ctl}) whose pid is on the first line of {@code pidFile}: {@code signal}
   * (e.g. {@code QUIT}) to it when the JVM ends, then up to 10 s for it to go.
   */
  public static Registration pidFile(Path pidFile, String signal) {
    return INSTANCE.add(INSTANCE.stops, ReaperScript.pidFile(pidFile, signal));
  }

  /** Registers {@code dir} to be removed (with all it holds) when the JVM ends. */
  public static Registration directory(Path dir) {
    return INSTANCE.add(INSTANCE.directories, ReaperScript.remove(dir));
  }

  /** A new temporary directory named {@code prefix...}, removed when the JVM ends. */
  public static Path temporaryDirectory(String prefix) throws IOException {
    Path dir = Files.createTempDirectory(prefix);
    directory(dir);
    return dir;
  }

  private synchronized Registration add(Map<Long, String> lines, String line) {
    long id = next++;
    lines.put(id, line);
    try {
      if (dir == null) {
        dir = watch();
      }
      write();
    } catch (IOException e) {
      lines.remove(id);
      throw new IllegalStateException("the reaper could not record '" + line + "'", e);
    }
    return () -> remove(lines, id);
  }

  private synchronized void remove(Map<Long, String> lines, long id) {
    if (lines.remove(id) != null) {
      try {
        write();
      } catch (IOException e) {
        throw new IllegalStateException("the reaper could not rewrite " + script(), e);
      }
    }
  }

  /** Makes the reaper's directory, starts the watchdog and adds the shutdown hook. */
  private static Path watch() throws IOException {
    long jvm = ProcessHandle.current().pid();
    Path dir = Path.of(System.getProperty("java.io.tmpdir"), "tensorcache-reaper-" + jvm);
    Files.createDirectories(dir);
    List<String> command = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      command.add("/usr/bin/setsid"); // out of the build's process group: a Ctrl-C spares it
    }
    command.addAll(
        List.of(
            "sh",
            "-c",
            ReaperScript.WATCHDOG,
            "tensorcache-reaper",
            Long.toString(jvm),
            startTime(jvm),
            dir.toString()));
    new ProcessBuilder(command)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(INSTANCE::cleanUp, "tensorcache-reaper"));
    return dir;
  }

  /** The shutdown hook: runs the cleanup script now, then empties it for the watchdog. */
  private void cleanUp() {
    Path script;
    synchronized (this) {
      script = script();
    }
    try {
      Process sh =
          new ProcessBuilder("sh", script.toString())
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!sh.waitFor(30, TimeUnit.SECONDS)) {
        sh.destroyForcibly(); // the watchdog runs it again once the JVM is gone
        return;
      }
      synchronized (this) {
        stops.clear();
        directories.clear();
        write();
      }
    } catch (IOException | InterruptedException e) {
      // the watchdog runs the script once the JVM is gone
    }
  }

  private void write() throws IOException {
    Path script = script();
    Path tmp = dir.resolve("cleanup.sh.tmp");
    List<String> newestFirst = new ArrayList<>(stops.values());
    java.util.Collections.reverse(newestFirst);
    Files.writeString(
        tmp, ReaperScript.cleanup(newestFirst, directories.values()), StandardCharsets.UTF_8);
    Files.move(tmp, script, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private Path script() {
    return dir.resolve("cleanup.sh");
  }

  /**
   * The start time of process {@code pid} in clock ticks after boot (field 22 of {@code
   * /proc/PID/stat}), which tells it from a later process given the same pid; empty where it cannot
   * be read (the process has ended).
   */
  static String startTime(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] fields = stat.substring(stat.lastIndexOf(") ") + 2).trim().split(" ");
      return fields[19];
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}
