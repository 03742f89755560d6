package org.tensorcache.bench.security;

import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLSession;
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
 * The lookup part's client JVM: asked {@code run CACHE PLAIN-HOST:PORT TLS-HOST:PORT}, it measures
 * the node's plain port and its TLS port (client certificate and token) in turns per batch size and
 * thread count, several rounds; beside them the same bytes through bare echo sockets of each kind
 * (the limit) and the same batches gathered from arrays in this process.
 */
public final class SecureClient {
  private static final int[] BATCHES = {32, 256, 4096};

  /** Replies whose every value is checked: the first of each thread and every 16th after it. */
  private static final int CHECK_EVERY = 16;

  private SecureClient() {}

  /**
   * Options: {@code --n N --server-pid PID --client-dir DIR --node-dir NODE --token-file FILE
   * --size S}; {@code DIR} holds the certs command's client files, {@code NODE} the node's, for the
   * TLS echo server.
   */
  public static void main(String[] args) {
    ClientProcess.serve(args, SecureClient::start);
  }

  private static ClientProcess.Client start(Map<String, String> a, RunSize size) throws Exception {
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
    Map<String, LongSupplier> cpu = Load.cpu(Long.parseLong(a.get("server-pid")));
    return words -> {
      Map<String, Load.Targets> ports = new LinkedHashMap<>();
      ports.put("plain", Load.port(words[2], LookupSecurity.none(), words[1], CHECK_EVERY));
      ports.put("tls", Load.port(words[3], security, words[1], CHECK_EVERY));
      try (SocketEcho plainEcho = SocketEcho.start(LookupSecurity.none());
          SocketEcho tlsEcho = SocketEcho.start(echoServer)) {
        Map<String, Load.Targets> echoes = new LinkedHashMap<>();
        echoes.put("echo-plain", () -> plainEcho.client(LookupSecurity.none()));
        echoes.put("echo-tls", () -> tlsEcho.client(security));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cipher_suite", cipherSuite(words[3], security));
        out.putAll(measure(ports, echoes, n, cpu, size));
        return out;
      }
    };
  }

  private static Map<String, Object> measure(
      Map<String, Load.Targets> ports,
      Map<String, Load.Targets> echoes,
      int n,
      Map<String, LongSupplier> cpu,
      RunSize size)
      throws Exception {
    int rounds = size.pick(3, 1, 1);
    int[] threadCounts = size.pick(new int[] {1, 2}, new int[] {1}, new int[] {1});
    double warmup = size.pick(2, 0.3, 0);
    double measure = size.pick(2, 0.5, 0.05);
    double jitWarmUp = size.pick(0.3, 0.3, 0.01);
    double floorWarmUp = size.pick(1, 1, 0);
    double floorMeasure = size.pick(2, 2, 0.05);
    Load.Targets gather = gather(n);
    List<Load.Targets> all = new ArrayList<>(ports.values());
    all.add(gather);
    all.addAll(echoes.values());
    // the JIT (TLS's AES-GCM included) before any figure, every batch size, the largest first
    for (int i = BATCHES.length - 1; i >= 0; i--) {
      for (Load.Targets t : all) {
        Load.run(t, Map.of(), n, BATCHES[i], 1, 0, jitWarmUp);
      }
    }
    Map<String, Object> connects = connects(ports, size.pick(20, 3, 1));
    Map<String, Object> cipher = CipherFloor.measure(BATCHES, size.pick(1, 0.5, 0.05));

    List<Map<String, Object>> rows = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      for (int batch : BATCHES) {
        for (int threads : threadCounts) {
          if (round == 1) { // the floor: the same batches from arrays in this process, once
            var floor = Load.run(gather, Map.of(), n, batch, threads, floorWarmUp, floorMeasure);
            rows.add(row("gather", round, floor));
          }
          // plain and TLS take turns, so that both see the same moments of a noisy machine; then
          // the limit: the same bytes through a bare socket of each kind, this JVM both ends
          Map<String, Load.Targets> sides = new LinkedHashMap<>(ports);
          sides.putAll(echoes);
          for (var side : sides.entrySet()) {
            var figures = Load.run(side.getValue(), cpu, n, batch, threads, warmup, measure);
            rows.add(row(side.getKey(), round, figures));
          }
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("rounds", rounds);
    out.put("warmup_s", warmup);
    out.put("measure_s", measure);
    out.put("check_every", CHECK_EVERY);
    out.put("connects", connects);
    out.put("aes_gcm_us_per_batch", cipher);
    out.put("rows", rows);
    return out;
  }

  /** The same batches gathered from arrays in this process: what the bytes cost in memory. */
  private static Load.Targets gather(int n) {
    float[][] values = new float[2][n];
    for (int i = 0; i < n; i++) {
      values[0][i] = SyntheticRunner.value(ServerNode.SEED, 0, i);
      values[1][i] = SyntheticRunner.value(ServerNode.SEED, 1, i);
    }
    return () ->
        new Load.Target<float[][]>() {
          private final float[][] out = new float[2][4096];
          private long replies;

          @Override
          public float[][] fetch(long[] indices) {
            for (int f = 0; f < out.length; f++) {
              float[] from = values[f];
              float[] to = out[f];
              for (int i = 0; i < indices.length; i++) {
                to[i] = from[(int) indices[i]];
              }
            }
            return out;
          }

          @Override
          public int check(long[] indices, float[][] reply) {
            return replies++ % CHECK_EVERY == 0 ? Load.expect(indices, reply[0], reply[1]) : 0;
          }
        };
  }

  /**
   * A new client's connection and first lookup (B=32; the spec, the TLS handshake and the token's
   * AUTH on the way), {@code times} times per port in turn; the median and the slowest, in ms.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> connects(Map<String, Load.Targets> ports, int times)
      throws Exception {
    long[] indices = new long[32];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = i * 7L;
    }
    Map<String, long[]> nanos = new LinkedHashMap<>();
    ports.keySet().forEach(k -> nanos.put(k, new long[times]));
    for (int t = 0; t < times; t++) {
      for (var p : ports.entrySet()) {
        long t0 = System.nanoTime();
        try (var client = (Load.Target<Object>) p.getValue().open()) {
          Object reply = client.fetch(indices);
          nanos.get(p.getKey())[t] = System.nanoTime() - t0;
          client.check(indices, reply); // its first reply: checked whole
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("times", times);
    nanos.forEach(
        (k, v) -> {
          Arrays.sort(v);
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("median_ms", Stats.round2(v[v.length / 2] / 1e6));
          m.put("max_ms", Stats.round2(v[v.length - 1] / 1e6));
          out.put(k, m);
        });
    return out;
  }

  /** The protocol and cipher suite the TLS port at {@code hostPort} and this client agree on. */
  private static String cipherSuite(String hostPort, LookupSecurity tls) throws Exception {
    int colon = hostPort.lastIndexOf(':');
    String host = hostPort.substring(0, colon);
    try (Socket tcp = new Socket(host, Integer.parseInt(hostPort.substring(colon + 1)))) {
      SSLSocket s = tls.clientSocket(tcp, host);
      s.startHandshake();
      SSLSession session = s.getSession();
      return session.getProtocol() + " " + session.getCipherSuite();
    }
  }

  private static Map<String, Object> row(String system, int round, Map<String, Object> figures) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("system", system);
    row.put("round", round);
    row.putAll(figures);
    return row;
  }
}
