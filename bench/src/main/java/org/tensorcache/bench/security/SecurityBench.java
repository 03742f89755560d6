package org.tensorcache.bench.security;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupEndpoint;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.remote.ClientProcess;
import org.tensorcache.bench.remote.RemoteBench;
import org.tensorcache.bench.remote.ServerNode;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.launch.tls.ClusterCertificates;

/**
 * What TLS costs, each secured figure next to the plain one measured beside it: lookups through a
 * node's lookup port with TLS 1.3, client certificates and a bearer token next to a plain TCP port
 * of the same node and replica, and a cluster fill with Artery over TLS next to Artery TCP ({@link
 * SecureFill}). The two of each pair take turns, several rounds; the figures are medians. Writes
 * {@code security.json} and {@code security.png}; never fails on a figure.
 */
public final class SecurityBench {
  /** The host the certificates name: every node of the benchmark listens on loopback. */
  static final String HOST = "127.0.0.1";

  private static final String CLIENT = "bench";

  private SecurityBench() {}

  /** Runs both parts, writing {@code resultsDir/security.json}. */
  public static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    long t0 = System.nanoTime();
    Path dir = Files2.fresh(work.resolve("security").toAbsolutePath());
    // what ./tensorcache certs --nodes 127.0.0.1 --client bench makes: a cluster CA and a node
    // certificate (Artery and the lookup port's server side), a client CA and a client certificate
    Path certs = dir.resolve("certs");
    ClusterCertificates.write(
        new ClusterCertificates.Request(
            certs, List.of(HOST), List.of(CLIENT), "tensorcache", 365, 3650, 2048, false),
        Instant.now());
    Path token = dir.resolve("lookup-token");
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    Files.writeString(token, HexFormat.of().formatHex(secret) + "\n", StandardCharsets.UTF_8);

    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "security");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    // the machine may be shared: its load, before and after, says how much else ran
    double loadBefore = loadAverage();

    System.out.println("-- lookups through the lookup port: plain TCP and TLS 1.3 + token --");
    long tl = System.nanoTime();
    Map<String, Object> lookups = lookups(dir.resolve("lookups"), certs, token, size);
    lookups.put("seconds", Stats.round1((System.nanoTime() - tl) / 1e9));
    System.out.println("-- cluster fill: Artery TCP and Artery TLS --");
    long tf = System.nanoTime();
    Map<String, Object> fill = SecureFill.run(dir.resolve("fill"), certs, size);
    fill.put("seconds", Stats.round1((System.nanoTime() - tf) / 1e9));

    results.put("load_average_1m", List.of(Stats.round1(loadBefore), Stats.round1(loadAverage())));
    results.put("lookups", lookups);
    results.put("fill", fill);
    results.put("targets", SecurityReport.report(results));
    results.put("total_s", Stats.round1((System.nanoTime() - t0) / 1e9));
    Results.write(resultsDir.resolve("security.json"), results);
    SecurityReport.chart(resultsDir.resolve("security.png"), lookups, fill);
    System.out.printf("security bench took %.1f s%n", (System.nanoTime() - t0) / 1e9);
  }

  /**
   * One node with the remote part's synthetic cache, its lookup port configured with TLS 1.3, a
   * client certificate and a token as a user would, and a second, plain TCP port without a token
   * served by the same local lookup (the same replica and threads); a client JVM ({@link
   * SecureClient}) measures both in turn.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> lookups(Path dir, Path certs, Path token, RunSize size)
      throws Exception {
    int n = RemoteBench.examples(size);
    Path node = ClusterCertificates.nodeDir(certs, HOST);
    String tls = "tensorcache.lookup.endpoint.tls.";
    Map<String, Object> settings = new HashMap<>();
    settings.put(tls + "enabled", "on");
    settings.put(tls + "certificate", node.resolve(ClusterCertificates.NODE_CERT).toString());
    settings.put(tls + "private-key", node.resolve(ClusterCertificates.NODE_KEY).toString());
    settings.put(tls + "client-ca", node.resolve(ClusterCertificates.CLIENT_CA_CERT).toString());
    settings.put("tensorcache.lookup.endpoint.token-file", token.toString());
    long started = System.nanoTime();
    try (ServerNode server =
            ServerNode.start(dir, "bench-security", n, List.of("local"), settings);
        LookupEndpoint plain = plainPort(server)) {
      String plainAt = plain.address().getHostString() + ":" + plain.address().getPort();
      System.out.printf(
          "node filled and ready in %.1f s: lookup port (TLS 1.3 + token) %s, plain port %s%n",
          (System.nanoTime() - started) / 1e9, server.endpoint(), plainAt);
      Map<String, Object> options = new HashMap<>();
      options.put("cache", server.cacheId());
      options.put("plain", plainAt);
      options.put("tls", server.endpoint());
      options.put("n", n);
      options.put("server-pid", ProcessHandle.current().pid());
      options.put("client-dir", ClusterCertificates.clientDir(certs, CLIENT));
      options.put("token-file", token);
      options.put("node-dir", node);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("examples", n);
      out.put("tls", "TLS 1.3, client certificate (RSA 2048), bearer token");
      Path answer = dir.resolve("client.json");
      out.putAll(ClientProcess.ask(SecureClient.class, options, answer, size, Map.class));
      return out;
    }
  }

  /** A second lookup port on the node, as the configured one but plain TCP without a token. */
  private static LookupEndpoint plainPort(ServerNode server) throws Exception {
    Config plain =
        ConfigFactory.parseString(
                "tensorcache.lookup.endpoint { port = 0, tls.enabled = off, token-file = \"\" }")
            .withFallback(server.system().settings().config());
    return LookupEndpoint.start(
        LocalLookup.get(server.system()), LookupEndpoint.Settings.create(plain));
  }

  private static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
