package org.tensorcache.bench.security;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.remote.ClientProcess;
import org.tensorcache.bench.remote.CpuMeter;
import org.tensorcache.bench.remote.Load;
import org.tensorcache.bench.remote.RemoteBench;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.launch.tls.ClusterCertificates;

/**
 * The client JVM of the lookup part: a {@link RemoteLookupClient} per thread on the node's plain
 * port and one on its TLS port (client certificate and token), taking turns per batch size and
 * thread count, several rounds; beside them, the same batches gathered from arrays in this process.
 * Asked {@code run PLAIN-HOST:PORT TLS-HOST:PORT} on standard input, it prints one line {@code
 * RESULT <json>}.
 */
public final class SecureClient {
  private static final Duration ASK = Duration.ofSeconds(10);
  private static final int[] BATCHES = {32, 256, 4096};

  /** The cache's fields: two floats an example. */
  private static final int FIELDS = 2;

  private SecureClient() {}

  /**
   * Usage: {@code SecureClient --cache ID --n N --server-pid PID --client-dir DIR --node-dir NODE
   * --token-file FILE [--quick | --smoke]}; {@code DIR} holds the certs command's {@code
   * client.crt}, {@code client.key} and {@code ca.crt}, {@code NODE} the node's files, for the TLS
   * echo server.
   */
  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1); // a failed check or server: exit at once, whatever threads are left
    }
    System.exit(0);
  }

  private static void run(String[] args) throws Exception {
    Map<String, String> a = ClientProcess.options(args);
    String cacheId = a.get("cache");
    int n = Integer.parseInt(a.get("n"));
    RunSize size = ClientProcess.size(a);
    Path certs = Path.of(a.get("client-dir"));
    LookupSecurity security =
        LookupSecurity.builder()
            .optCertificate(
                certs.resolve(ClusterCertificates.CLIENT_CERT),
                certs.resolve(ClusterCertificates.CLIENT_KEY))
            .optTrust(certs.resolve(ClusterCertificates.CA_CERT))
            .optTokenFile(Path.of(a.get("token-file")))
            .build();
    float[][] reference = new float[2][n];
    for (int i = 0; i < n; i++) {
      reference[0][i] = SyntheticRunner.value(RemoteBench.SEED, 0, i);
      reference[1][i] = SyntheticRunner.value(RemoteBench.SEED, 1, i);
    }
    Path node = Path.of(a.get("node-dir"));
    LookupSecurity echoServer =
        LookupSecurity.builder()
            .optCertificate(
                node.resolve(ClusterCertificates.NODE_CERT),
                node.resolve(ClusterCertificates.NODE_KEY))
            .optTrust(node.resolve(ClusterCertificates.CLIENT_CA_CERT))
            .build();
    Map<String, LongSupplier> cpu = new LinkedHashMap<>();
    cpu.put("client", CpuMeter.self());
    cpu.put("server", CpuMeter.process(Long.parseLong(a.get("server-pid"))));

    var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null && line.startsWith("run "); ) {
      String[] words = line.split(" ");
      Map<String, Ports> ports = new LinkedHashMap<>();
      ports.put("plain", new Ports(address(words[1]), LookupSecurity.none()));
      ports.put("tls", new Ports(address(words[2]), security));
      Map<String, Object> answer;
      try (SocketEcho plainEcho = SocketEcho.start(LookupSecurity.none());
          SocketEcho tlsEcho = SocketEcho.start(echoServer)) {
        Map<String, Load.Targets> echoes = new LinkedHashMap<>();
        echoes.put("echo-plain", () -> plainEcho.client(LookupSecurity.none(), FIELDS));
        echoes.put("echo-tls", () -> tlsEcho.client(security, FIELDS));
        answer = measure(ports, echoes, cacheId, reference, cpu, size);
      }
      System.out.println(ClientProcess.RESULT + new ObjectMapper().writeValueAsString(answer));
    }
  }

  /** A port and the credentials its clients present. */
  private record Ports(InetSocketAddress address, LookupSecurity security) {
    RemoteLookupClient connect() {
      return RemoteLookupClient.connect(List.of(address), ASK, security);
    }
  }

  private static Map<String, Object> measure(
      Map<String, Ports> ports,
      Map<String, Load.Targets> echoes,
      String cacheId,
      float[][] reference,
      Map<String, LongSupplier> cpu,
      RunSize size)
      throws Exception {
    int n = reference[0].length;
    int rounds = size.pick(3, 1, 1);
    int[] threadCounts = size.pick(new int[] {1, 2}, new int[] {1}, new int[] {1});
    double warmup = size.pick(2, 0.3, 0);
    double measure = size.pick(2, 0.5, 0.05);
    double jitWarmUp = size.pick(0.3, 0.3, 0.01);
    double floorWarmUp = size.pick(1, 1, 0);
    double floorMeasure = size.pick(2, 2, 0.05);
    Load.Targets gather = () -> new LookupTargets.Gather(reference);

    // the JIT (TLS's AES-GCM included) before any figure, every batch size, the largest first
    for (int i = BATCHES.length - 1; i >= 0; i--) {
      for (Ports p : ports.values()) {
        Load.run(
            () -> new LookupTargets.Port(p.connect(), cacheId),
            Map.of(),
            n,
            BATCHES[i],
            1,
            0,
            jitWarmUp);
      }
      Load.run(gather, Map.of(), n, BATCHES[i], 1, 0, jitWarmUp);
      for (Load.Targets echo : echoes.values()) {
        Load.run(echo, Map.of(), n, BATCHES[i], 1, 0, jitWarmUp);
      }
    }
    Map<String, Object> connects = connects(ports, cacheId, size.pick(20, 3, 1));
    Map<String, Object> cipher = CipherFloor.measure(BATCHES, size.pick(1, 0.5, 0.05));

    List<Map<String, Object>> rows = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      for (int batch : BATCHES) {
        for (int threads : threadCounts) {
          if (round == 1) { // the floor: the same batches from arrays in this process, once
            var floor = Load.run(gather, Map.of(), n, batch, threads, floorWarmUp, floorMeasure);
            rows.add(row("gather", round, floor));
          }
          // plain and TLS take turns, so that both see the same moments of a noisy machine
          for (var p : ports.entrySet()) {
            Load.Targets port = () -> new LookupTargets.Port(p.getValue().connect(), cacheId);
            var figures = Load.run(port, cpu, n, batch, threads, warmup, measure);
            rows.add(row(p.getKey(), round, figures));
          }
          // the limit: the same bytes through a bare socket of each kind, this JVM both ends
          for (var e : echoes.entrySet()) {
            var figures = Load.run(e.getValue(), cpu, n, batch, threads, warmup, measure);
            rows.add(row(e.getKey(), round, figures));
          }
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cipher_suite", cipherSuite(ports.get("tls")));
    out.put("rounds", rounds);
    out.put("warmup_s", warmup);
    out.put("measure_s", measure);
    out.put("check_every", LookupTargets.CHECK_EVERY);
    out.put("connects", connects);
    out.put("aes_gcm_us_per_batch", cipher);
    out.put("rows", rows);
    return out;
  }

  /**
   * A new client's connection and first lookup (B=32; the spec, the TLS handshake and the token's
   * AUTH on the way), {@code times} times per port in turn; the median and the slowest, in ms.
   */
  private static Map<String, Object> connects(Map<String, Ports> ports, String cacheId, int times) {
    long[] indices = new long[32];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = i * 7L;
    }
    Map<String, long[]> nanos = new LinkedHashMap<>();
    ports.keySet().forEach(k -> nanos.put(k, new long[times]));
    for (int t = 0; t < times; t++) {
      for (var p : ports.entrySet()) {
        float[][] out = new float[2][indices.length];
        long t0 = System.nanoTime();
        try (RemoteLookupClient client = p.getValue().connect()) {
          client.lookupInto(cacheId, indices, out);
        }
        nanos.get(p.getKey())[t] = System.nanoTime() - t0;
        for (int i = 0; i < indices.length; i++) {
          LookupTargets.expect(indices[i], out[0][i], out[1][i]);
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("times", times);
    nanos.forEach(
        (k, v) -> {
          long[] sorted = v.clone();
          Arrays.sort(sorted);
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("median_ms", Stats.round2(sorted[sorted.length / 2] / 1e6));
          m.put("max_ms", Stats.round2(sorted[sorted.length - 1] / 1e6));
          out.put(k, m);
        });
    return out;
  }

  /** The protocol and cipher suite the TLS port and this client agree on. */
  private static String cipherSuite(Ports tls) throws Exception {
    try (Socket tcp = new Socket()) {
      tcp.connect(tls.address(), (int) ASK.toMillis());
      SSLSocket s = tls.security().clientSocket(tcp, tls.address().getHostString());
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

  private static InetSocketAddress address(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    return new InetSocketAddress(
        hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
  }
}
