package org.tensorcache.bench.remote;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.PartArgs;
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
  /** The examples of the benchmark's cache. */
  public static final int N = 20_000;

  /** The examples of a smoke run's cache. */
  public static final int SMOKE_N = 2_048;

  private static final List<String> TRANSPORTS = List.of("endpoint", "artery", "aeron");

  private RemoteBench() {}

  /** Usage: {@code RemoteBench [--quick | --smoke] [--out DIR] [--work DIR]}. */
  public static void main(String[] args) throws Exception {
    PartArgs p = PartArgs.parse(args);
    run(p.work(), p.out(), p.size());
    System.exit(0); // an aeron-udp node may leave non-daemon threads behind
  }

  /** Runs the benchmark; returns what it writes to {@code resultsDir/remote.json}. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> run(Path work, Path resultsDir, RunSize size) throws Exception {
    ClientProcess.AERON_PROPERTIES.forEach(System::setProperty);
    long t0 = System.nanoTime();
    int n = size.pick(N, N, SMOKE_N);
    Path dir = Files2.fresh(work.resolve("remote").toAbsolutePath());
    List<Map<String, Object>> rows = new ArrayList<>();
    try (RedisServer redis =
            RedisServer.start(dir.resolve("redis-" + ProcessHandle.current().pid()));
        // starts while the first server fills
        ClientProcess client =
            new ClientProcess(
                RemoteClient.class,
                Map.of(
                    "n", n,
                    "redis", redis.port(),
                    "redis-pid", redis.pid(),
                    "server-pid", ProcessHandle.current().pid(),
                    "work", dir.resolve("client")),
                size)) {
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
          String target = transport.equals("endpoint") ? server.endpoint() : path;
          String command = String.join(" ", "run", transport, server.cacheId(), target);
          rows.addAll(client.ask(command, List.class));
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
    List<Map<String, Object>> beside = RemoteReport.print(rows);
    results.put("targets_at_256", RemoteReport.targets(beside));
    results.put("beside_redis", beside);
    Results.write(resultsDir.resolve("remote.json"), results);
    RemoteReport.chart(resultsDir.resolve("remote.png"), rows);
    System.out.printf("remote bench took %.1f s%n", (System.nanoTime() - t0) / 1e9);
    return results;
  }
}
