package org.tensorcache.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The PostgreSQL server of the journal: the one named by {@code TENSORCACHE_PG_URL}, or one of its
 * own (Debian's binaries, run as user postgres) in a temporary directory on a free port. A server
 * of its own is detached ({@code pg_ctl} starts it); the {@link Reaper} stops it (SIGQUIT: an
 * immediate shutdown) and removes its directory when the JVM ends.
 */
public final class Postgres implements AutoCloseable {
  private final Map<String, String> env;
  private final Path ownDir;
  private final Path bin;
  private final int port;
  private final List<Reaper.Registration> reaped = new ArrayList<>();

  private Postgres(Map<String, String> env, Path ownDir, Path bin, int port) {
    this.env = env;
    this.ownDir = ownDir;
    this.bin = bin;
    this.port = port;
  }

  /**
   * Whether {@link #obtain()} can give a server: one named by the environment, or Debian's started
   * here, which takes root (the server runs as the {@code postgres} user).
   */
  public static boolean available() {
    String url = System.getenv("TENSORCACHE_PG_URL");
    if (url != null && !url.isBlank()) {
      return true;
    }
    return canStartOwn();
  }

  /** Whether a server of this class's own can be started here: Debian's binaries, as root. */
  public static boolean canStartOwn() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return false;
    }
    try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/postgresql"))) {
      return dirs.anyMatch(d -> Files.isExecutable(d.resolve("bin").resolve("postgres")));
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * A server of this class's own where one can be started (so that it can be stopped), whatever the
   * environment names; else the one the environment names.
   */
  public static Postgres stoppable() throws IOException, InterruptedException {
    return canStartOwn() ? startOwn() : obtain();
  }

  /** The server the environment names, or a fresh one. */
  public static Postgres obtain() throws IOException, InterruptedException {
    String url = System.getenv("TENSORCACHE_PG_URL");
    if (url != null && !url.isBlank()) {
      String user = System.getenv().getOrDefault("TENSORCACHE_PG_USER", "tensorcache");
      String pass = System.getenv().getOrDefault("TENSORCACHE_PG_PASSWORD", "");
      return new Postgres(envOf(url, user, pass), null, null, -1);
    }
    return startOwn();
  }

  private static Postgres startOwn() throws IOException, InterruptedException {
    Path bin;
    try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/postgresql"))) {
      bin =
          dirs.map(d -> d.resolve("bin"))
              .filter(b -> Files.isExecutable(b.resolve("postgres")))
              .max(Comparator.comparing(Path::toString))
              .orElseThrow(
                  () -> new IllegalStateException("no PostgreSQL under /usr/lib/postgresql"));
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalStateException(
          "TENSORCACHE_PG_URL is not set and PostgreSQL is not installed (/usr/lib/postgresql)");
    }
    Path dir = Files.createTempDirectory("tensorcache-pg");
    Reaper.Registration removal = Reaper.directory(dir);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Postgres pg =
        new Postgres(
            envOf("jdbc:postgresql://127.0.0.1:" + port + "/tensorcache", "tensorcache", ""),
            dir,
            bin,
            port);
    pg.reaped.add(removal);
    pg.reaped.add(Reaper.pidFile(dir.resolve("data").resolve("postmaster.pid"), "QUIT"));
    run("chown", "postgres", dir.toString());
    pg.asPostgres("initdb", "-D", dir + "/data", "-U", "tensorcache", "-A", "trust");
    pg.start();
    pg.asPostgres(
        "createdb",
        "-h",
        "127.0.0.1",
        "-p",
        Integer.toString(port),
        "-U",
        "tensorcache",
        "tensorcache");
    return pg;
  }

  private static Map<String, String> envOf(String url, String user, String pass) {
    return Map.of(
        "TENSORCACHE_PG_URL", url, "TENSORCACHE_PG_USER", user, "TENSORCACHE_PG_PASSWORD", pass);
  }

  /**
   * Whether this class started the server, so that it may stop and start it again; one named by
   * {@code TENSORCACHE_PG_URL} is never stopped.
   */
  public boolean ownServer() {
    return ownDir != null;
  }

  /** Starts the server this class made (again, on the same port and files) and waits for it. */
  public void start() throws IOException, InterruptedException {
    requireOwn();
    asPostgres(
        "pg_ctl",
        "-D",
        ownDir + "/data",
        "-l",
        ownDir + "/server.log",
        "-w",
        "-o",
        "-p " + port + " -k " + ownDir + " -c listen_addresses=127.0.0.1",
        "start");
  }

  /** Stops the server this class made at once, as a crash of its machine would. */
  public void stop() throws IOException, InterruptedException {
    requireOwn();
    asPostgres("pg_ctl", "-D", ownDir + "/data", "-m", "immediate", "-w", "stop");
  }

  private void requireOwn() {
    if (ownDir == null) {
      throw new IllegalStateException(
          "PostgreSQL at " + env.get("TENSORCACHE_PG_URL") + " is not ours to stop or start");
    }
  }

  /** The postmaster's pid, read from its pid file; empty while it is not running. */
  public java.util.OptionalLong pid() throws IOException {
    requireOwn();
    Path pidFile = ownDir.resolve("data").resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return java.util.OptionalLong.empty();
    }
    return java.util.OptionalLong.of(Long.parseLong(Files.readAllLines(pidFile).get(0).trim()));
  }

  /** The directory of a server of its own: its data, socket and log. */
  public Path directory() {
    requireOwn();
    return ownDir;
  }

  /** The environment variables that point a node at this server. */
  public Map<String, String> env() {
    return env;
  }

  private void asPostgres(String tool, String... args) throws IOException, InterruptedException {
    List<String> cmd =
        new ArrayList<>(List.of("runuser", "-u", "postgres", "--", bin.resolve(tool).toString()));
    cmd.addAll(List.of(args));
    run(cmd.toArray(String[]::new));
  }

  private static void run(String... cmd) throws IOException, InterruptedException {
    Path out = Files.createTempFile("tensorcache-chaos-pg", ".log");
    try {
      Process p =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.to(out.toFile()))
              .start();
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(
            String.join(" ", cmd) + " failed: " + Files.readString(out));
      }
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Stops a server this class started; leaves one named by the environment alone. */
  @Override
  public void close() throws Exception {
    if (ownDir != null) {
      // it may be stopped already (an outage under way): stop is then a harmless failure
      try {
        stop();
      } catch (IllegalStateException notRunning) {
        // removed below anyway
      }
      run("rm", "-rf", ownDir.toString());
      reaped.forEach(Reaper.Registration::close);
    }
  }
}
