package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
  private static final List<String> JOB =
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

  @TempDir Path dir;
  private final List<Process> processes = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** One node process and where its health checks answer. */
  private record Node(Process process, int port, int management, Path log) {}

  @Test
  void aTerminatedNodeIsNotReadyBeforeItExitsAndStaysAliveUntilThen() throws Exception {
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
    assertEquals(0, third.process().waitFor(), "exit code; log:\n" + tail(third));
    assertTrue(sawNotReadyWhileAlive, "/ready 503 while /alive 200, seen " + seen);
    for (Node n : List.of(first, second)) {
      assertEquals(200, status(n, "/ready"), "the others stay ready");
    }
  }

  private Node start(String name, Node seed) throws Exception {
    int port = freePort();
    List<String> command = new ArrayList<>();
    command.add(Path.of("..", "tensorcache").toAbsolutePath().normalize().toString());
    command.addAll(
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
    command.addAll(JOB);
    if (seed != null) {
      command.addAll(List.of("--seeds", "127.0.0.1:" + seed.port()));
    }
    Path log = dir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.environment().put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    pb.environment().put("JAVA_OPTS", "-Xmx384m");
    Process p = pb.start();
    processes.add(p);
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = UP.matcher(read(log));
      if (m.find()) {
        return new Node(p, port, Integer.parseInt(m.group(2)), log);
      }
      if (!p.isAlive()) {
        throw new IllegalStateException(name + " exited " + p.exitValue() + ":\n" + read(log));
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(name + " not up in 180 s:\n" + read(log));
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
    assertEquals(expected, last, path + " of port " + n.port() + "; log:\n" + tail(n));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  private static String tail(Node n) throws IOException {
    String text = read(n.log());
    return text.substring(Math.max(0, text.length() - 4000));
  }

  @AfterEach
  void stop() throws InterruptedException {
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
