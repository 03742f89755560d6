package org.tensorcache.bench.remote;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

/**
 * A redis-server of its own on a free loopback port, persistence off, in its own directory; stopped
 * by {@link #close} or, if the JVM exits first, by a shutdown hook.
 */
final class RedisServer implements AutoCloseable {
  static final String BINARY = "/usr/bin/redis-server";
  private static final int LOAD_CHUNK = 1_000;

  private final Process process;
  private final Thread hook;
  private final int port;

  private RedisServer(Process process, int port) {
    this.process = process;
    this.port = port;
    this.hook = new Thread(process::destroyForcibly, "redis-stop");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Starts the server in {@code dir} and waits until it answers PING. */
  static RedisServer start(Path dir) throws Exception {
    if (!Files.isExecutable(Path.of(BINARY))) {
      throw new IllegalStateException(
          BINARY + " not found: the Redis reference needs Debian's redis-server package");
    }
    Files.createDirectories(dir);
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    Process p =
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
            .redirectOutput(dir.resolve("redis.log").toFile())
            .start();
    RedisServer server = new RedisServer(p, port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (Jedis jedis = new Jedis("127.0.0.1", port)) {
        if ("PONG".equals(jedis.ping())) {
          return server;
        }
      } catch (RuntimeException e) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          server.close();
          throw new IllegalStateException(
              "redis-server did not answer on port " + port + ", see " + dir.resolve("redis.log"),
              e);
        }
        Thread.sleep(50);
      }
    }
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  /** Loads example {@code i} as key {@link #key}(i) with both fields as its 8-byte value. */
  void load(float[] chosen, float[] rejected) {
    try (Jedis jedis = new Jedis("127.0.0.1", port)) {
      Pipeline pipe = jedis.pipelined();
      for (int from = 0; from < chosen.length; from += LOAD_CHUNK) {
        int to = Math.min(chosen.length, from + LOAD_CHUNK);
        byte[][] keysAndValues = new byte[2 * (to - from)][];
        for (int i = from; i < to; i++) {
          keysAndValues[2 * (i - from)] = key(i);
          keysAndValues[2 * (i - from) + 1] = value(chosen[i], rejected[i]);
        }
        pipe.mset(keysAndValues);
      }
      pipe.sync();
      long size = jedis.dbSize();
      if (size != chosen.length) {
        throw new IllegalStateException("redis holds " + size + " keys, expected " + chosen.length);
      }
    }
  }

  /** The key of example {@code index}. */
  static byte[] key(long index) {
    return ("tc:" + index).getBytes(StandardCharsets.US_ASCII);
  }

  /** The two floats of an example as 8 little-endian bytes. */
  static byte[] value(float chosen, float rejected) {
    return ByteBuffer.allocate(8)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putFloat(chosen)
        .putFloat(rejected)
        .array();
  }

  @Override
  public void close() throws IOException, InterruptedException {
    process.destroy(); // SIGTERM: with --save '' nothing is written
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down; the hook stops the process
    }
  }
}
