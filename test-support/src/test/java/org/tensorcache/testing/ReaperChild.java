package org.tensorcache.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The child JVM of {@link ReaperTest}, standing for a test run: it starts every server available
 * here through the real starters, prints {@code pid NAME PID} and {@code dir PATH} for each, then
 * {@code ready}, and waits to be killed.
 */
public final class ReaperChild {
  private ReaperChild() {}

  /** Starts the servers and waits; never returns. */
  public static void main(String[] args) throws Exception {
    // a JVM started with SIGINT ignored (a background job) would not take a Ctrl-C: take it as
    // a terminal's JVM does, exiting through the shutdown hooks
    sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> System.exit(130));

    Path s3 = Reaper.temporaryDirectory("tensorcache-reaper-test-s3");
    S3ProxyServer server = S3ProxyServer.start(s3);
    report("s3proxy", server.pid(), s3);

    if (Postgres.canStartOwn()) {
      Postgres pg = Postgres.stoppable();
      report("postgres", pg.pid().orElseThrow(), pg.directory());
    }
    if (RedisServer.installed()) {
      Path dir = Reaper.temporaryDirectory("tensorcache-reaper-test-redis");
      report("redis", RedisServer.start(dir).pid(), dir);
    }
    try {
      Path dir = Reaper.temporaryDirectory("tensorcache-reaper-test-dns");
      report("dnsmasq", Dnsmasq.start(dir, "reaper.test").pid(), dir);
    } catch (RuntimeException notInstalled) {
      System.out.println("skipped dnsmasq: " + notInstalled.getMessage());
    }

    // a node: a process with a child of its own, as ./tensorcache's shell is
    Process node = Reaper.start(new ProcessBuilder(List.of("sh", "-c", "sleep 1000 & wait")));
    report("node", node.pid(), null);
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (node.children().findAny().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20); // the shell forks its child at once
    }
    ProcessHandle sleep =
        node.children()
            .findAny()
            .orElseThrow(() -> new IllegalStateException("sh -c 'sleep 1000 & wait' has no child"));
    report("node-child", sleep.pid(), null);

    System.out.println("ready");
    System.out.flush();
    new CountDownLatch(1).await();
  }

  private static void report(String name, long pid, Path dir) {
    System.out.println("pid " + name + " " + pid);
    if (dir != null) {
      System.out.println("dir " + dir.toAbsolutePath());
    }
    System.out.flush();
  }
}
