package org.tensorcache.bench.remote;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.testing.RedisServer;

/**
 * Lookups from a process that holds no replica: a client JVM ({@link RemoteClient}) asks an
 * embedded node through its binary lookup port, and its lookup actor over Artery TCP and over Aeron
 * UDP, each figure next to Redis MGET of the same keys and values in the same client. Writes {@code
 * remote.json} and {@code remote.png}; never fails on a figure: these machines are noisy.
 */
public final class RemoteBench {
  private static final List<String> TRANSPORTS = List.of("endpoint", "artery", "aeron");

  private RemoteBench() {}

  /** The examples of the cache that the clients of this part and of the security part ask. */
  public static int examples(RunSize size) {
    return size.pick(20_000, 20_000, 2_048);
  }

  /** Runs the benchmark, writing {@code resultsDir/remote.json}. */
  @SuppressWarnings("unchecked")
  public static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    ClientProcess.AERON_PROPERTIES.forEach(System::setProperty);
    long t0 = System.nanoTime();
    int n = examples(size);
    Path dir = Files2.fresh(work.resolve("remote").toAbsolutePath());
    List<Map<String, Object>> rows = new ArrayList<>();
    try (RedisServer redis =
        RedisServer.start(dir.resolve("redis-" + ProcessHandle.current().pid()))) {
      for (String transport : TRANSPORTS) {
        List<String> profiles =
            transport.equals("aeron") ? List.of("aeron", "local") : List.of("local");
        long started = System.nanoTime();
        try (ServerNode server =
            ServerNode.start(dir.resolve(transport), "bench-remote", n, profiles, Map.of())) {
          String path = server.lookupPath();
          System.out.printf(
              "%s: server filled and ready in %.1f s at %s, lookup port %s%n",
              transport, (System.nanoTime() - started) / 1e9, path, server.endpoint());
          long measuring = System.nanoTime();
          Map<String, Object> options = new HashMap<>();
          options.put("transport", transport);
          options.put("cache", server.cacheId());
          options.put("at", transport.equals("endpoint") ? server.endpoint() : path);
          options.put("n", n);
          options.put("redis", redis.port());
          options.put("redis-pid", redis.pid());
          options.put("server-pid", ProcessHandle.current().pid());
          options.put("work", dir.resolve("client"));
          Path answer = dir.resolve(transport + "-client.json");
          rows.addAll(ClientProcess.ask(RemoteClient.class, options, answer, size, List.class));
          System.out.printf(
              "%s: measured in %.1f s%n", transport, (System.nanoTime() - measuring) / 1e9);
        }
      }
    }
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "remote");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("examples", n);
    results.put("size", size.label());
    results.put("rows", rows);
    RemoteReport.report(results, rows);
    Results.write(resultsDir.resolve("remote.json"), results);
    RemoteReport.chart(resultsDir.resolve("remote.png"), rows);
    System.out.printf("remote bench took %.1f s%n", (System.nanoTime() - t0) / 1e9);
  }
}
