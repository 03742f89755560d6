package org.tensorcache.bench.security;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupEndpoint;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.remote.ClientProcess;
import org.tensorcache.bench.remote.RemoteBench;
import org.tensorcache.bench.remote.ServerNode;
import org.tensorcache.launch.tls.ClusterCertificates;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The lookup part: one node with the remote benchmark's synthetic cache (N = 20,000 examples, two
 * float fields; a smoke run's is smaller), its lookup port configured with TLS 1.3, client
 * certificates and a token, as a user would configure it, and a second, plain TCP port on the same
 * node serving the same replica; a client JVM ({@link SecureClient}) measures both in turn.
 */
final class SecureLookups {
  private SecureLookups() {}

  /** Starts the node and the client, measures; returns the client's rows and connection costs. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> run(Path dir, Path certs, Path token, RunSize size) throws Exception {
    int n = size.pick(RemoteBench.N, RemoteBench.N, RemoteBench.SMOKE_N);
    Path jsonl = Files.createDirectories(dir).resolve("data.jsonl");
    SyntheticPreferences.write(jsonl, 42, n);
    ExampleSet data = ExampleSet.load(jsonl);
    CacheSpec spec = new CacheSpec("bench-security", n, SyntheticRunner.FIELDS, 1024);
    Fingerprint fp;
    try (SyntheticRunner runner = new SyntheticRunner(RemoteBench.SEED)) {
      fp = CacheDefinition.fingerprint(runner, data, spec);
    }
    CacheDefinition definition =
        new CacheDefinition(
            spec,
            fp,
            data,
            () -> new SyntheticRunner(RemoteBench.SEED),
            dir.resolve("segments"),
            64);
    Path node = ClusterCertificates.nodeDir(certs, SecurityBench.HOST);
    Map<String, Object> settings = new HashMap<>();
    settings.put("tensorcache.lookup.endpoint.tls.enabled", "on");
    settings.put(
        "tensorcache.lookup.endpoint.tls.certificate",
        node.resolve(ClusterCertificates.NODE_CERT).toString());
    settings.put(
        "tensorcache.lookup.endpoint.tls.private-key",
        node.resolve(ClusterCertificates.NODE_KEY).toString());
    settings.put(
        "tensorcache.lookup.endpoint.tls.client-ca",
        node.resolve(ClusterCertificates.CLIENT_CA_CERT).toString());
    settings.put("tensorcache.lookup.endpoint.token-file", token.toString());

    List<String> args = new ArrayList<>();
    args.addAll(List.of("--cache", fp.cacheId(), "--n", Integer.toString(n)));
    args.addAll(List.of("--server-pid", Long.toString(ProcessHandle.current().pid())));
    Path client = ClusterCertificates.clientDir(certs, SecurityBench.CLIENT);
    args.addAll(List.of("--client-dir", client.toString(), "--token-file", token.toString()));
    args.addAll(List.of("--node-dir", node.toString()));
    size.flag().ifPresent(args::add);
    long started = System.nanoTime();
    try (ServerNode server =
            ServerNode.start(List.of("local"), settings, definition, dir.resolve("node"));
        LookupEndpoint plain = plainPort(server);
        // starts once the node is filled, so that it does not slow the fill down
        ClientProcess process =
            new ClientProcess(
                SecureClient.class.getName(), args, Duration.ofSeconds(size.pick(900, 120, 60)))) {
      String plainAt = hostPort(plain.address());
      System.out.printf(
          "node filled and ready in %.1f s: lookup port (TLS 1.3 + token) %s, plain port %s%n",
          (System.nanoTime() - started) / 1e9, server.endpoint(), plainAt);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("examples", n);
      out.put("tls", "TLS 1.3, client certificate (RSA 2048), bearer token");
      out.putAll(process.ask("run " + plainAt + " " + server.endpoint(), Map.class));
      return out;
    }
  }

  /**
   * A second lookup port on the node, as the configured one but plain TCP without a token, served
   * by the same local lookup (the same replica and threads).
   */
  private static LookupEndpoint plainPort(ServerNode server) throws IOException {
    LookupEndpoint.Settings s = LookupEndpoint.Settings.create(server.system().settings().config());
    return LookupEndpoint.start(
        LocalLookup.get(server.system()),
        new LookupEndpoint.Settings(
            s.host(),
            0,
            s.maxConnections(),
            s.readTimeout(),
            s.idleTimeout(),
            s.handshakeTimeout(),
            null,
            null));
  }

  private static String hostPort(InetSocketAddress a) {
    return a.getHostString() + ":" + a.getPort();
  }
}
