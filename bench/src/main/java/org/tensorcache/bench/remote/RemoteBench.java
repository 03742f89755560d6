package org.tensorcache.bench.remote;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.report.Results;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.testing.RedisServer;

/**
 * Lookups from a process that holds no replica: a client JVM asks an embedded node through its
 * binary lookup port (RemoteLookupClient), and its lookup actor over Artery TCP and over Aeron UDP,
 * each figure next to Redis MGET of the same keys and values in the same client. Prints a table,
 * writes {@code remote.json} and {@code remote.png}. Never fails on a figure: these machines are
 * noisy.
 */
public final class RemoteBench {
  /** The examples of the benchmark's cache (a smoke run's: {@link #SMOKE_N}). */
  public static final int N = 20_000;

  /** The examples of a smoke run's cache. */
  public static final int SMOKE_N = 2_048;

  /** The seed of the synthetic values the server holds and the client checks. */
  public static final long SEED = 42;

  static final List<String> TRANSPORTS = List.of("endpoint", "artery", "aeron");

  /** The Aeron flags the launcher gives a node of the aeron profile, before Aeron reads them. */
  static final Map<String, String> AERON_PROPERTIES =
      Map.of(
          "aeron.socket.so_rcvbuf", "4194304",
          "aeron.socket.so_sndbuf", "4194304",
          "aeron.rcv.initial.window.length", "4194304");

  private RemoteBench() {}

  /**
   * Usage: {@code RemoteBench [--quick | --smoke] [--only endpoint|artery|aeron] [--out DIR]
   * [--work DIR]}; {@code -Dpekko.*} and {@code -Daeron.*} settings apply to the server node and
   * the client.
   */
  public static void main(String[] args) throws Exception {
    boolean quick = false;
    boolean smoke = false;
    List<String> transports = TRANSPORTS;
    Path out = Path.of("bench/results");
    Path work = Path.of("bench/work");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--smoke" -> smoke = true;
        case "--out" -> out = Path.of(args[++i]);
        case "--work" -> work = Path.of(args[++i]);
        case "--only" -> transports = List.of(args[++i]);
        default ->
            throw new IllegalArgumentException(
                "unknown argument '"
                    + args[i]
                    + "', expected --quick, --smoke, --only endpoint|artery|aeron, --out DIR or"
                    + " --work DIR");
      }
    }
    if (!TRANSPORTS.containsAll(transports)) {
      throw new IllegalArgumentException(
          "--only " + transports + ", expected one of " + TRANSPORTS);
    }
    run(work, out, RunSize.of(quick, smoke), transports);
    System.exit(0); // an aeron-udp node may leave non-daemon threads behind
  }

  /** Runs the benchmark; returns what it writes to {@code resultsDir/remote.json}. */
  public static Map<String, Object> run(Path work, Path resultsDir, RunSize size) throws Exception {
    return run(work, resultsDir, size, TRANSPORTS);
  }

  /** Runs the benchmark over {@code transports} (endpoint, artery, aeron) only. */
  public static Map<String, Object> run(
      Path work, Path resultsDir, RunSize size, List<String> transports) throws Exception {
    AERON_PROPERTIES.forEach(System::setProperty);
    long t0 = System.nanoTime();
    int n = size.pick(N, N, SMOKE_N);
    Path dir = work.resolve("remote").toAbsolutePath();
    SyntheticPreferences.write(Files.createDirectories(dir).resolve("data.jsonl"), 42, n);
    ExampleSet data = ExampleSet.load(dir.resolve("data.jsonl"));
    CacheSpec spec = new CacheSpec("bench-remote", n, SyntheticRunner.FIELDS, 1024);
    Fingerprint fp;
    try (SyntheticRunner runner = new SyntheticRunner(SEED)) {
      fp = CacheDefinition.fingerprint(runner, data, spec);
    }

    List<Map<String, Object>> rows = new ArrayList<>();
    boolean loaded = false;
    try (RedisServer redis =
            RedisServer.start(dir.resolve("redis-" + ProcessHandle.current().pid()));
        // starts while the first server fills; it touches Redis only once asked to measure
        ClientProcess client =
            ClientProcess.remote(fp.cacheId(), n, redis, dir.resolve("client"), size)) {
      for (String transport : transports) {
        Path phase = org.tensorcache.bench.fixture.Files2.fresh(dir.resolve(transport));
        CacheDefinition definition =
            new CacheDefinition(
                spec, fp, data, () -> new SyntheticRunner(SEED), phase.resolve("segments"), 64);
        List<String> profiles =
            transport.equals("aeron") ? List.of("aeron", "local") : List.of("local");
        long started = System.nanoTime();
        try (ServerNode server = ServerNode.start(profiles, definition, phase.resolve("node"))) {
          if (!loaded) { // the values the first server holds, checked against the runner
            float[][] values = server.values();
            RedisValues.load(redis.port(), values[0], values[1]);
            loaded = true;
          }
          System.out.printf(
              "%s: server filled and ready in %.1f s at %s, lookup port %s%n",
              transport,
              (System.nanoTime() - started) / 1e9,
              server.lookupPath(),
              server.endpoint());
          long measuring = System.nanoTime();
          String target = transport.equals("endpoint") ? server.endpoint() : server.lookupPath();
          rows.addAll(client.measure(transport, target));
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
    results.put("targets_at_256", RemoteReport.targets(rows));
    results.put("beside_redis", RemoteReport.print(rows));
    Results.write(resultsDir.resolve("remote.json"), results);
    RemoteReport.chart(resultsDir.resolve("remote.png"), rows);
    System.out.printf("remote bench took %.1f s%n", (System.nanoTime() - t0) / 1e9);
    return results;
  }
}
