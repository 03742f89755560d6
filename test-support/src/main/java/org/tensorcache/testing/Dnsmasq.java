package org.tensorcache.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * A real DNS server for tests: dnsmasq (Debian's dnsmasq-base) on a free loopback port, answering
 * the names of one domain from a hosts file that {@link #records} rewrites (a SIGHUP makes dnsmasq
 * read it again); a name without records is answered "no such name". Without dnsmasq a test skips
 * itself, except under {@code CI=true}, where it fails.
 */
public final class Dnsmasq implements AutoCloseable {
  private static final Pattern READ = Pattern.compile("read \\S+hosts - (\\d+) names");

  private final Process process;
  private final int port;
  private final Path hosts;
  private final Path log;

  private Dnsmasq(Process process, int port, Path hosts, Path log) {
    this.process = process;
    this.port = port;
    this.hosts = hosts;
    this.log = log;
  }

  /**
   * Starts dnsmasq in {@code dir} for the names under {@code domain}, with no records yet; skips
   * the test without dnsmasq (fails it on CI).
   */
  public static Dnsmasq start(Path dir, String domain) throws IOException, InterruptedException {
    String dnsmasq = executable();
    Files.createDirectories(dir);
    Path hosts = dir.resolve("hosts");
    Files.writeString(hosts, "# no records yet\n");
    for (int attempt = 1; ; attempt++) {
      int port = freePort();
      Path log = dir.resolve("dnsmasq-" + port + ".log");
      Process p =
          Reaper.start(
              new ProcessBuilder(
                      dnsmasq,
                      "--no-daemon", // in the foreground, as this user, no pid file
                      "--port=" + port,
                      "--listen-address=127.0.0.1",
                      "--bind-interfaces",
                      "--no-resolv", // no upstream servers: only what the hosts file says
                      "--no-hosts",
                      "--local=/" + domain + "/", // other names of the domain: "no such name"
                      "--addn-hosts=" + hosts,
                      "--log-queries",
                      "--log-facility=-")
                  .redirectErrorStream(true)
                  .redirectOutput(log.toFile()));
      Dnsmasq server = new Dnsmasq(p, port, hosts, log);
      if (server.awaitReads(1)) {
        return server;
      }
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      if (attempt == 5) { // each port was free when picked; something else took it in between
        throw new IllegalStateException("dnsmasq did not start:\n" + Files.readString(log));
      }
    }
  }

  /** The port it answers on, at 127.0.0.1 (UDP and TCP). */
  public int port() {
    return port;
  }

  /** Where it answers, as {@code 127.0.0.1:PORT}. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /** The dnsmasq process's pid. */
  public long pid() {
    return process.pid();
  }

  /** Gives {@code name} the A records {@code addresses} (only these) and waits until they hold. */
  public void records(String name, List<String> addresses) throws IOException {
    StringBuilder text = new StringBuilder();
    for (String a : addresses) {
      text.append(a).append(' ').append(name).append('\n');
    }
    int reads = reads();
    Files.writeString(hosts, text.toString());
    try {
      Process kill = new ProcessBuilder("kill", "-s", "HUP", Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -s HUP dnsmasq failed");
      }
      if (!awaitReads(reads + 1)) {
        throw new IllegalStateException("dnsmasq did not read " + hosts + " again:\n" + logText());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Waits (at most 30 s) until dnsmasq has read the hosts file {@code count} times. */
  private boolean awaitReads(int count) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline && process.isAlive()) {
      if (reads() >= count) {
        return true;
      }
      Thread.sleep(20);
    }
    return reads() >= count;
  }

  private int reads() throws IOException {
    Matcher m = READ.matcher(logText());
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  /** What dnsmasq logged: its start, each query and each answer. */
  public String logText() throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  private static String executable() {
    List<String> dirs =
        new ArrayList<>(
            List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
    dirs.addAll(List.of("/usr/sbin", "/sbin")); // not on the PATH of every user
    for (String d : dirs) {
      Path p = Path.of(d.isEmpty() ? "." : d, "dnsmasq");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    String message = "dnsmasq not found on PATH or in /usr/sbin (apt-get install dnsmasq-base)";
    if ("true".equals(System.getenv("CI"))) {
      fail("CI: the DNS discovery tests need a DNS server: " + message);
    }
    Assumptions.abort("DNS discovery test skipped: " + message);
    return null;
  }

  /** A port free for both UDP and TCP on 127.0.0.1 (dnsmasq listens on both). */
  private static int freePort() throws IOException {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    for (int i = 0; i < 50; i++) {
      try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(loopback, 0))) {
        try (ServerSocket tcp = new ServerSocket(udp.getLocalPort(), 1, loopback)) {
          return tcp.getLocalPort();
        } catch (IOException e) {
          // that port is taken for TCP: another one
        }
      }
    }
    throw new IllegalStateException("no port free for both UDP and TCP on 127.0.0.1");
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
