package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /ready} and {@code /alive} of three {@code ./tensorcache node} processes: all three become
 * ready; a SIGTERM makes that node's {@code /ready} answer 503 while its {@code /alive} still
 * answers 200, until it exits 0; the other two stay ready.
 */
class NodeHealthProcessTest {
  private static final Pattern UP =
      Pattern.compile("node up: \\S+ .*lookup-port=\\S+ management=([^:\\s]+):(\\d+)");

  @TempDir Path dir;
  private NodeProcesses processes;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** One node process and where its health checks answer. */
  private record Node(NodeProcesses.Started started, int port, int management) {
    Process process() {
      return started.process();
    }
  }

  @Test
  void aTerminatedNodeIsNotReadyBeforeItExitsAndStaysAliveUntilThen() throws Exception {
    processes = new NodeProcesses(dir);
    Node first = start("n1", null); // it makes the data set and the model alone
    Node second = start("n2", first);
    Node third = start("n3", first);
    for (Node n : List.of(first, second, third)) {
      awaitStatus(n, "/ready", 200, Duration.ofSeconds(120));
      assertEquals(200, status(n, "/alive"));
    }

    new ProcessBuilder("kill", "-s", "TERM", Long.toString(third.process().pid()))
        .start()
        .waitFor(10, TimeUnit.SECONDS);
    boolean sawNotReady = false;
    boolean sawNotReadyWhileAlive = false;
    List<String> seen = new ArrayList<>();
    while (third.process().isAlive()) {
      int ready = status(third, "/ready");
      int alive = status(third, "/alive");
      seen.add(ready + "/" + alive);
      // a node that is shutting down answers /alive with 200 until its HTTP server goes down with
      // the actor system, just before the process exits: never with an error status
      assertTrue(alive == 200 || alive == -1, "alive answered " + alive + " after " + seen);
      assertTrue(ready != 200 || !sawNotReady, "ready again after " + seen);
      sawNotReady |= ready != 200;
      sawNotReadyWhileAlive |= ready == 503 && alive == 200;
      Thread.sleep(50);
    }
    assertEquals(0, third.process().waitFor(), "exit code; log:\n" + third.started().tail());
    assertTrue(sawNotReadyWhileAlive, "/ready 503 while /alive 200, seen " + seen);
    for (Node n : List.of(first, second)) {
      assertEquals(200, status(n, "/ready"), "the others stay ready");
    }
  }

  private Node start(String name, Node seed) throws Exception {
    int port = freePort();
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "node",
            "--host",
            "127.0.0.1",
            "--port",
            Integer.toString(port),
            "--lookup-port",
            "0",
            "--management-port",
            "0",
            "--data-dir",
            dir.resolve("data").toString()));
    args.addAll(NodeProcesses.SMALL_JOB);
    if (seed != null) {
      args.addAll(List.of("--seeds", "127.0.0.1:" + seed.port()));
    }
    NodeProcesses.Started started = processes.start(name, args, "-Xmx384m");
    Matcher m = NodeProcesses.await(started, UP, Duration.ofSeconds(180));
    return new Node(started, port, Integer.parseInt(m.group(2)));
  }

  /** The HTTP status of {@code path} on the node's management port; -1 when nothing answers. */
  private int status(Node n, String path) throws InterruptedException {
    try {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.management() + path))
              .timeout(Duration.ofSeconds(5))
              .build();
      return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    }
  }

  private void awaitStatus(Node n, String path, int expected, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    int last = status(n, path);
    while (last != expected && System.nanoTime() < deadline) {
      Thread.sleep(200);
      last = status(n, path);
    }
    assertEquals(expected, last, path + " of port " + n.port() + "; log:\n" + n.started().tail());
  }

  private static int freePort() throws IOException {
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
