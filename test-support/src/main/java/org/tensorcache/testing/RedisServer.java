package org.tensorcache.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of its own (Debian's) on a free loopback port, persistence off, in its own
 * directory; stopped by {@link #close} or, if the JVM ends first, by the {@link Reaper}.
 */
public final class RedisServer implements AutoCloseable {
  /** Where Debian's redis-server package puts the server. */
  public static final String BINARY = "/usr/bin/redis-server";

  private final Process process;
  private final int port;

  private RedisServer(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Whether the server is installed here. */
  public static boolean installed() {
    return Files.isExecutable(Path.of(BINARY));
  }

  /** Starts the server in {@code dir} and waits (at most 10 s) until it answers PING. */
  public static RedisServer start(Path dir) throws IOException, InterruptedException {
    if (!installed()) {
      throw new IllegalStateException(
          BINARY + " not found: the Redis reference needs Debian's redis-server package");
    }
    Files.createDirectories(dir);
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    Process p =
        Reaper.start(
            new ProcessBuilder(
                    BINARY,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    Integer.toString(port),
                    "--dir",
                    dir.toAbsolutePath().toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()));
    RedisServer server = new RedisServer(p, port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!server.answersPing()) {
      if (!p.isAlive() || System.nanoTime() > deadline) {
        server.close();
        throw new IllegalStateException(
            "redis-server did not answer on port " + port + ", see " + dir.resolve("redis.log"));
      }
      Thread.sleep(50);
    }
    return server;
  }

  /** The port it listens on, at 127.0.0.1. */
  public int port() {
    return port;
  }

  /** The server process's pid. */
  public long pid() {
    return process.pid();
  }

  private boolean answersPing() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      s.setSoTimeout(1000);
      s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      byte[] reply = in.readNBytes(7);
      return "+PONG\r\n".equals(new String(reply, StandardCharsets.US_ASCII));
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy(); // SIGTERM: with --save '' nothing is written
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
  }
}
