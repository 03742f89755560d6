package org.tensorcache.bench.security;

import java.net.Socket;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.IntSupplier;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.remote.ClientProcess;
import org.tensorcache.bench.remote.Load;
import org.tensorcache.bench.remote.ServerNode;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.launch.tls.ClusterCertificates;

/**
 * The lookup part's client: it measures the node's plain port at {@code plain} and its TLS port at
 * {@code tls} (client certificate and token), {@code host:port} each, in turns, several rounds;
 * beside them the same bytes through bare echo sockets of each kind (the limit) and the same
 * batches gathered from arrays in this process (the floor).
 */
public final class SecureClient {
  private static final int[] BATCHES = {32, 256, 4096};

  /** Replies whose every value is checked: the first of each thread and every 16th after it. */
  private static final int CHECK_EVERY = 16;

  private SecureClient() {}

  /**
   * Options beside those: {@code cache}, {@code n}, {@code server-pid}, {@code token-file}, {@code
   * client-dir} and {@code node-dir}: the certs command's client files, and the node's for the TLS
   * echo server.
   */
  public static void main(String[] args) {
    ClientProcess.serve(args, SecureClient::measure);
  }

  private static Map<String, Object> measure(Map<String, String> a, RunSize size) throws Exception {
    int n = Integer.parseInt(a.get("n"));
    Path certs = Path.of(a.get("client-dir"));
    LookupSecurity security =
        LookupSecurity.builder()
            .optCertificate(
                certs.resolve(ClusterCertificates.CLIENT_CERT),
                certs.resolve(ClusterCertificates.CLIENT_KEY))
            .optTrust(certs.resolve(ClusterCertificates.CA_CERT))
            .optTokenFile(Path.of(a.get("token-file")))
            .build();
    Path node = Path.of(a.get("node-dir"));
    LookupSecurity echoServer =
        LookupSecurity.builder()
            .optCertificate(
                node.resolve(ClusterCertificates.NODE_CERT),
                node.resolve(ClusterCertificates.NODE_KEY))
            .optTrust(node.resolve(ClusterCertificates.CLIENT_CA_CERT))
            .build();
    var cpu = Load.cpu(Long.parseLong(a.get("server-pid")));
    Load.Targets gather = gather(n);
    try (SocketEcho plainEcho = new SocketEcho(LookupSecurity.none());
        SocketEcho tlsEcho = new SocketEcho(echoServer)) {
      Load.Targets plain =
          Load.port(a.get("plain"), LookupSecurity.none(), a.get("cache"), CHECK_EVERY);
      Load.Targets tls = Load.port(a.get("tls"), security, a.get("cache"), CHECK_EVERY);
      Load.Targets echoPlain = () -> plainEcho.client(LookupSecurity.none());
      Load.Targets echoTls = () -> tlsEcho.client(security);
      // the JIT (TLS's AES-GCM included) before any figure, every batch size, the largest first
      for (int i = BATCHES.length - 1; i >= 0; i--) {
        for (Load.Targets t : List.of(plain, tls, gather, echoPlain, echoTls)) {
          Load.run(t, Map.of(), n, BATCHES[i], 1, 0, size.pick(0.3, 0.3, 0.01));
        }
      }
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("cipher_suite", cipherSuite(a.get("tls"), security));
      int rounds = size.pick(3, 1, 1);
      double warmup = size.pick(2, 0.3, 0);
      double measure = size.pick(2, 0.5, 0.05);
      out.put("rounds", rounds);
      out.put("warmup_s", warmup);
      out.put("measure_s", measure);
      out.put("check_every", CHECK_EVERY);
      out.put("connects", connects(Map.of("plain", plain, "tls", tls), size.pick(20, 3, 1)));
      out.put("aes_gcm_us_per_batch", CipherFloor.measure(BATCHES, size.pick(1, 0.5, 0.05)));
      int[] threads = size.pick(new int[] {1, 2}, new int[] {1}, new int[] {1});
      // the floor, once
      var floor = List.of(new Load.Side("gather", gather, Map.of()));
      List<Map<String, Object>> rows =
          Load.turns(
              floor,
              n,
              BATCHES,
              threads,
              size.pick(1, 1, 0),
              size.pick(2, 2, 0.05),
              Map.of("round", 1));
      // plain and TLS take turns, then the limit: the same bytes through a bare socket of each
      // kind, this JVM both ends
      List<Load.Side> sides =
          List.of(
              new Load.Side("plain", plain, cpu),
              new Load.Side("tls", tls, cpu),
              new Load.Side("echo-plain", echoPlain, cpu),
              new Load.Side("echo-tls", echoTls, cpu));
      for (int round = 1; round <= rounds; round++) {
        rows.addAll(
            Load.turns(sides, n, BATCHES, threads, warmup, measure, Map.of("round", round)));
      }
      out.put("rows", rows);
      return out;
    }
  }

  /** The same batches gathered from arrays in this process: what the bytes cost in memory. */
  private static Load.Targets gather(int n) {
    float[][] values = new float[2][n];
    for (int i = 0; i < n; i++) {
      values[0][i] = SyntheticRunner.value(ServerNode.SEED, 0, i);
      values[1][i] = SyntheticRunner.value(ServerNode.SEED, 1, i);
    }
    BiConsumer<long[], float[][]> into =
        (indices, out) -> {
          for (int f = 0; f < out.length; f++) {
            float[] from = values[f];
            float[] to = out[f];
            for (int i = 0; i < indices.length; i++) {
              to[i] = from[(int) indices[i]];
            }
          }
        };
    return () -> Load.into(into, CHECK_EVERY, () -> {});
  }

  /**
   * A new client's connection and first lookup (B=32; the spec, the TLS handshake and the token's
   * AUTH on the way), {@code times} times per port in turn; the median and the slowest, in ms.
   */
  private static Map<String, Object> connects(Map<String, Load.Targets> ports, int times)
      throws Exception {
    long[] indices = new long[32];
    Arrays.setAll(indices, i -> i * 7L);
    Map<String, long[]> nanos = new LinkedHashMap<>();
    for (int t = 0; t < times; t++) {
      for (String port : List.of("plain", "tls")) {
        long t0 = System.nanoTime();
        try (Load.Target client = ports.get(port).open()) {
          IntSupplier check = client.fetch(indices);
          nanos.computeIfAbsent(port, k -> new long[times])[t] = System.nanoTime() - t0;
          check.getAsInt(); // its first reply: checked whole
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("times", times);
    nanos.forEach(
        (k, v) -> {
          Arrays.sort(v);
          out.put(
              k,
              Map.of(
                  "median_ms", Stats.round2(v[v.length / 2] / 1e6),
                  "max_ms", Stats.round2(v[v.length - 1] / 1e6)));
        });
    return out;
  }

  /** The protocol and cipher suite the TLS port at {@code hostPort} and this client agree on. */
  private static String cipherSuite(String hostPort, LookupSecurity tls) throws Exception {
    var address = Load.address(hostPort);
    try (Socket tcp = new Socket(address.getHostString(), address.getPort())) {
      SSLSocket s = tls.clientSocket(tcp, address.getHostString());
      s.startHandshake();
      return s.getSession().getProtocol() + " " + s.getSession().getCipherSuite();
    }
  }
}
