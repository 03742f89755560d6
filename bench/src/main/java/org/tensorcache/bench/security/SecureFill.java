package org.tensorcache.bench.security;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.remote.ServerNode;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.scale.ScaleCaches;
import org.tensorcache.launch.tls.ClusterCertificates;
import org.tensorcache.launch.tls.TransportSecurity;

/**
 * The fill part: two nodes in this JVM, as the scale benchmark runs them, fill a cache over Artery
 * TCP, then a fresh one over Artery TLS 1.3 with mutual authentication (the {@code tls} profile),
 * in turns; each value is computed on one node and replicated to the other through the transport. A
 * fill counts until every range is persisted; every node's copy is then checked on a sample.
 */
final class SecureFill {
  private static final int NODES = 2;

  private SecureFill() {}

  /** Fills in turns, after a warm-up fill over each: plain, TLS, plain, TLS, ... */
  static Map<String, Object> run(Path dir, Path certs, RunSize size) throws Exception {
    // fills of 12-18 s on the 2-core development machine; 24 million took 20-53 s, and the part
    // up to ten minutes on a busy moment
    int n = size.pick(16_000_000, 300_000, 2 * ScaleCaches.RANGE_SIZE);
    int rounds = size.pick(3, 1, 1);
    String tlsDir = ClusterCertificates.nodeDir(certs, SecurityBench.HOST).toString();
    // the first fills in this JVM run before the JIT has compiled the fill's paths (with an eighth
    // of N first, the fills still sped up by half from the first round to the third): a fill of
    // half the size over each transport first, not counted (none in a smoke run)
    int warmUp = size.pick(n / 2, n / 8, 0);
    List<Map<String, Object>> runs = new ArrayList<>();
    for (int round = warmUp > 0 ? 0 : 1; round <= rounds; round++) {
      int examples = round == 0 ? warmUp : n;
      for (String system : List.of("plain", "tls")) {
        var run = one(dir, system, round, examples, tlsDir);
        if (round > 0) {
          runs.add(run);
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("examples", n);
    out.put("nodes", NODES);
    out.put("range_size", ScaleCaches.RANGE_SIZE);
    out.put("runs", runs);
    return out;
  }

  private static Map<String, Object> one(Path dir, String system, int round, int n, String tlsDir)
      throws Exception {
    boolean tls = system.equals("tls");
    Path d = Files2.fresh(dir.resolve(system + "-" + round));
    CacheDefinition def = ScaleCaches.definition(d, "security-fill", n);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("system", system);
    row.put("round", round);
    long t0 = System.nanoTime();
    EmbeddedNodes cluster =
        EmbeddedNodes.start(
            d.resolve("node"),
            List.of(def),
            NODES,
            tls ? Map.of("tensorcache.security.tls.dir", tlsDir) : Map.of(),
            tls ? List.of("tls", "local") : List.of("local"));
    try {
      row.put("transport", TransportSecurity.transport(cluster.system(0).settings().config()));
      row.put("start_s", Stats.round2((System.nanoTime() - t0) / 1e9));
      EmbeddedNodes.Fill timed = cluster.fill(def.cacheId(), Duration.ofMinutes(10));
      row.put("fill_s", Stats.round2(timed.seconds()));
      row.put("examples_per_s", Math.round(n / timed.seconds()));
      row.put("cpu_us_per_example", Stats.round2(timed.cpuSeconds() * 1e6 / n));
      row.put("computed_per_node", cluster.computedExamples());
      long t1 = System.nanoTime();
      for (int node = 0; node < NODES; node++) {
        cluster.awaitReplica(node, def.cacheId(), Duration.ofMinutes(5));
      }
      row.put("replica_wait_s", Stats.round2((System.nanoTime() - t1) / 1e9));
      // a sample of every node's values against the runner's
      SplittableRandom random = new SplittableRandom(n);
      for (int node = 0; node < NODES; node++) {
        long[] indices = random.longs(4096, 0, n).toArray();
        Batch b = cluster.client(node).lookup(def.cacheId(), indices);
        ServerNode.check(
            ScaleCaches.SEED,
            indices,
            b.floats("chosen_logp"),
            b.floats("rejected_logp"),
            "held by node " + node);
      }
      row.put("values_checked", NODES * 4096);
    } finally {
      // a node that does not stop within the launcher's bound is noted, and costs no figure
      long t1 = System.nanoTime();
      try {
        cluster.close();
      } catch (CompletionException e) {
        row.put("stop_timed_out", true);
        System.out.println("  a node did not stop in time: " + e.getCause());
      }
      row.put("stop_s", Stats.round2((System.nanoTime() - t1) / 1e9));
    }
    System.out.printf(
        "  %-5s %s: %,d examples on %d nodes (%s) in %.1f s: %,d examples/s; stopped in %.1f s%n",
        system,
        round == 0 ? "warm-up" : "round " + round,
        n,
        NODES,
        row.get("transport"),
        row.get("fill_s"),
        row.get("examples_per_s"),
        row.get("stop_s"));
    return row;
  }
}
