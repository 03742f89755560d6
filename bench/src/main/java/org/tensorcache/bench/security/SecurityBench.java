package org.tensorcache.bench.security;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.PartArgs;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.launch.tls.ClusterCertificates;

/**
 * What TLS costs, each secured figure next to the plain one measured beside it: lookups through a
 * node's lookup port with TLS 1.3, client certificates and a bearer token next to a plain TCP port
 * of the same node and cache ({@link SecureLookups}), and a cluster fill with Artery over TLS next
 * to Artery TCP ({@link SecureFill}). The two of each pair take turns, several rounds, and the
 * figures are medians. Prints the tables with their targets, writes {@code security.json} and
 * {@code security.png}; never fails on a figure.
 */
public final class SecurityBench {
  /** The hosts the certificates name: every node of the benchmark listens on loopback. */
  static final String HOST = "127.0.0.1";

  /** The name of the lookup port's client certificate. */
  static final String CLIENT = "bench";

  private SecurityBench() {}

  /** Usage: {@code SecurityBench [--quick | --smoke] [--out DIR] [--work DIR]}. */
  public static void main(String[] args) throws Exception {
    PartArgs p = PartArgs.parse(args);
    run(p.work(), p.out(), p.size());
    System.exit(0); // a stopped node may leave a non-daemon pool thread behind
  }

  /** Runs both parts; returns what it writes to {@code resultsDir/security.json}. */
  public static Map<String, Object> run(Path work, Path resultsDir, RunSize size) throws Exception {
    long t0 = System.nanoTime();
    Path dir = Files2.fresh(work.resolve("security").toAbsolutePath());
    Path certs = certificates(dir.resolve("certs"));
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
    Map<String, Object> lookups = SecureLookups.run(dir.resolve("lookups"), certs, token, size);
    lookups.put("seconds", Stats.round1((System.nanoTime() - tl) / 1e9));
    System.out.println("-- cluster fill: Artery TCP and Artery TLS --");
    long tf = System.nanoTime();
    Map<String, Object> fill = SecureFill.run(dir.resolve("fill"), certs, size);
    fill.put("seconds", Stats.round1((System.nanoTime() - tf) / 1e9));

    results.put("load_average_1m", List.of(Stats.round1(loadBefore), Stats.round1(loadAverage())));
    results.put("lookups", lookups);
    results.put("fill", fill);
    results.put("targets", SecurityReport.targets(lookups, fill));
    results.put("total_s", Stats.round1((System.nanoTime() - t0) / 1e9));
    SecurityReport.print(results);
    Results.write(resultsDir.resolve("security.json"), results);
    SecurityReport.chart(resultsDir.resolve("security.png"), lookups, fill);
    System.out.printf("security bench took %.1f s%n", (System.nanoTime() - t0) / 1e9);
    return results;
  }

  /**
   * Makes what {@code ./tensorcache certs --nodes 127.0.0.1 --client bench} makes, under {@code
   * out}: a cluster CA and a node certificate for loopback (Artery and the lookup port's server
   * side), a client CA and the lookup port client's certificate.
   */
  private static Path certificates(Path out) throws IOException {
    ClusterCertificates.write(
        new ClusterCertificates.Request(
            out, List.of(HOST), List.of(CLIENT), "tensorcache", 365, 3650, 2048, false),
        Instant.now());
    return out;
  }

  private static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
