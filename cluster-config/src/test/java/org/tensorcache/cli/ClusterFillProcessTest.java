package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster {@code fill} from a process of its own against two {@code ./tensorcache node}
 * processes: it prints the cache it filled and no warning, leaves the cluster cleanly, and writes
 * under its own {@code --data-dir} only what the cache id is derived from (the built-in model and
 * synthetic data set), no cache.
 */
class ClusterFillProcessTest {
  private static final Pattern UP = Pattern.compile("node up: ");

  @TempDir Path dir;
  private NodeProcesses processes;

  @Test
  void aCleanFillSaysWhatItFilledAndWarnsOfNothing() throws Exception {
    processes = new NodeProcesses(dir);
    int seed = freePort();
    NodeProcesses.Started first = node("n1", seed, null); // makes the data set and model alone
    NodeProcesses.await(first, UP, Duration.ofSeconds(180));
    NodeProcesses.Started second = node("n2", freePort(), seed);
    NodeProcesses.await(second, UP, Duration.ofSeconds(180));

    Path clientData = dir.resolve("client-data");
    List<String> args =
        new ArrayList<>(
            List.of(
                "fill",
                "--seeds",
                "127.0.0.1:" + seed,
                "--host",
                "127.0.0.1",
                "--timeout",
                "120",
                "--data-dir",
                clientData.toString()));
    args.addAll(NodeProcesses.SMALL_JOB);
    // as a user runs it: the application's logging, not the tests'
    String logging =
        "-Dlogback.configurationFile=" + Path.of("src/main/resources/logback.xml").toAbsolutePath();
    NodeProcesses.Started fill = processes.start("fill", args, "-Xmx384m " + logging);
    assertTrue(fill.process().waitFor(240, TimeUnit.SECONDS), "fill ended; log:\n" + fill.tail());
    String log = fill.text();
    assertEquals(0, fill.process().exitValue(), log);
    String cacheId =
        NodeProcesses.await(first, Pattern.compile("cache=(dpo-ref-\\w+)"), Duration.ofSeconds(1))
            .group(1);
    assertTrue(log.contains("filled " + cacheId + ": 256 examples in 4 ranges persisted"), log);
    assertFalse(log.contains("WARN"), "a clean fill warns of nothing:\n" + log);
    assertFalse(log.contains("ERROR"), log);

    List<String> written;
    try (Stream<Path> top = Files.list(clientData)) {
      written = top.map(p -> p.getFileName().toString()).sorted().toList();
    }
    assertEquals(List.of("datasets", "models"), written, "the client keeps no cache of its own");
  }

  private NodeProcesses.Started node(String name, int port, Integer seed) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "node",
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--data-dir",
                dir.resolve("data").toString()));
    args.addAll(NodeProcesses.SMALL_JOB);
    if (seed != null) {
      args.addAll(List.of("--seeds", "127.0.0.1:" + seed));
    }
    return processes.start(name, args, "-Xmx384m");
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (processes != null) {
      processes.close();
    }
  }
}
