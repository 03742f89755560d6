package org.tensorcache.chaostests;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The loopback ports of a chaos run's members and proxies: each free when handed out, below Linux's
 * ephemeral range (32768-60999), so that no outgoing connection of the many a run makes can take
 * one before its member binds it, and never the same twice a run.
 */
final class LoopbackPorts {
  private static final AtomicInteger nextPort =
      new AtomicInteger(20_000 + new Random().nextInt(10_000));

  private LoopbackPorts() {}

  /** A port of 127.0.0.1 free now, not handed out before in this run. */
  static int next() throws IOException {
    for (int tries = 0; tries < 2_000; tries++) {
      int port = nextPort.getAndIncrement();
      if (port >= 32_768) {
        nextPort.set(20_000);
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress("127.0.0.1", port));
        return port;
      } catch (IOException busy) {
        // taken: the next one
      }
    }
    throw new IOException("no free port on 127.0.0.1 between 20000 and 32767");
  }
}
