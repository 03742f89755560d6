package org.tensorcache.chaostests;

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
 * own (Debian's binaries, run as user postgres) in a temporary directory on a free port.
 */
final class Postgres implements AutoCloseable {
  private final Map<String, String> env;
  private final Path ownDir;
  private final Path bin;

  private Postgres(Map<String, String> env, Path ownDir, Path bin) {
    this.env = env;
    this.ownDir = ownDir;
    this.bin = bin;
  }

  /** The server the environment names, or a fresh one. */
  /**
   * Whether {@link #obtain()} can give a server: one named by the environment, or Debian's started
   * here, which takes root (the server runs as the {@code postgres} user).
   */
  static boolean available() {
    String url = System.getenv("TENSORCACHE_PG_URL");
    if (url != null && !url.isBlank()) {
      return true;
    }
    if (!"root".equals(System.getProperty("user.name"))) {
      return false;
    }
    try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/postgresql"))) {
      return dirs.anyMatch(d -> Files.isExecutable(d.resolve("bin").resolve("postgres")));
    } catch (IOException e) {
      return false;
    }
  }

  static Postgres obtain() throws IOException, InterruptedException {
    String url = System.getenv("TENSORCACHE_PG_URL");
    if (url != null && !url.isBlank()) {
      String user = System.getenv().getOrDefault("TENSORCACHE_PG_USER", "tensorcache");
      String pass = System.getenv().getOrDefault("TENSORCACHE_PG_PASSWORD", "");
      return new Postgres(envOf(url, user, pass), null, null);
    }
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
    Path dir = Files.createTempDirectory("tensorcache-chaos-pg");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Postgres pg =
        new Postgres(
            envOf("jdbc:postgresql://127.0.0.1:" + port + "/tensorcache", "tensorcache", ""),
            dir,
            bin);
    run("chown", "postgres", dir.toString());
    pg.asPostgres("initdb", "-D", dir + "/data", "-U", "tensorcache", "-A", "trust");
    pg.asPostgres(
        "pg_ctl",
        "-D",
        dir + "/data",
        "-l",
        dir + "/server.log",
        "-w",
        "-o",
        "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1",
        "start");
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

  /** The environment variables that point a node at this server. */
  Map<String, String> env() {
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
      asPostgres("pg_ctl", "-D", ownDir + "/data", "-m", "immediate", "-w", "stop");
      run("rm", "-rf", ownDir.toString());
    }
  }
}
