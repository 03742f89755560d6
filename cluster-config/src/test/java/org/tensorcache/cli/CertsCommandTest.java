package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.lookup.PemFiles;
import org.tensorcache.launch.tls.ClusterCertificates;
import org.tensorcache.launch.tls.TlsFiles;
import picocli.CommandLine;

/** {@code certs}: the files it writes, what it refuses to replace, and a CA reused to add nodes. */
class CertsCommandTest {
  @TempDir Path dir;

  @Test
  void writesCasNodesAndClientsThatTheStartUpCheckAccepts() throws Exception {
    Path out = dir.resolve("certs");
    Run run =
        certs("--out", out.toString(), "--nodes", "127.0.0.1,node-b.example", "--clients", "2");
    assertEquals(0, run.code, run.err);
    for (String f : List.of("ca.crt", "ca.key", "client-ca.crt", "client-ca.key")) {
      assertTrue(run.out.contains("wrote  " + out.resolve(f)), run.out);
    }
    assertTrue(run.out.contains("next: copy " + out.resolve("nodes") + "/<host>"), run.out);
    Path a = ClusterCertificates.nodeDir(out, "127.0.0.1");
    Path b = ClusterCertificates.nodeDir(out, "node-b.example");
    assertEquals(out.resolve("nodes/node-b.example"), b);
    for (Path key :
        List.of(
            out.resolve("ca.key"),
            out.resolve("client-ca.key"),
            a.resolve("node.key"),
            b.resolve("node.key"),
            out.resolve("clients/client-2/client.key"))) {
      assertEquals(
          "rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(key)),
          key.toString());
      assertTrue(Files.readString(key).startsWith("-----BEGIN PRIVATE KEY-----\n"), key.toString());
    }

    Instant now = Instant.now();
    X509Certificate nodeA = TlsFiles.check(files(a), "127.0.0.1", now);
    assertEquals(List.of("IP:127.0.0.1", "DNS:localhost"), TlsFiles.alternativeNames(nodeA));
    assertDoesNotThrow(() -> TlsFiles.check(files(a), "localhost", now));
    X509Certificate nodeB = TlsFiles.check(files(b), "node-b.example", now);
    assertEquals(List.of("DNS:node-b.example"), TlsFiles.alternativeNames(nodeB));
    assertEquals("CN=tensorcache", nodeA.getSubjectX500Principal().getName());
    assertEquals("CN=tensorcache", nodeB.getSubjectX500Principal().getName());

    // lookup-port clients: issued by the client CA (which every node holds), not the cluster CA
    Path client = out.resolve("clients/client-1");
    X509Certificate clientCert = PemFiles.certificate(client.resolve("client.crt"), "client");
    X509Certificate clientCa = PemFiles.certificate(a.resolve("client-ca.crt"), "client CA");
    X509Certificate clusterCa = PemFiles.certificate(client.resolve("ca.crt"), "cluster CA");
    assertDoesNotThrow(() -> clientCert.verify(clientCa.getPublicKey()));
    assertThrows(Exception.class, () -> clientCert.verify(clusterCa.getPublicKey()));
    assertEquals(List.of("1.3.6.1.5.5.7.3.2"), clientCert.getExtendedKeyUsage());
    assertEquals("CN=client-1", clientCert.getSubjectX500Principal().getName());
    assertArrayEquals(
        Files.readAllBytes(out.resolve("ca.crt")), Files.readAllBytes(b.resolve("ca.crt")));
  }

  @Test
  void replacesNothingWithoutForceAndReusesTheCaToAddANode() throws Exception {
    Path out = dir.resolve("certs");
    assertEquals(
        0, certs("--out", out.toString(), "--nodes", "10.0.0.5", "--client", "trainer").code);
    byte[] ca = Files.readAllBytes(out.resolve("ca.crt"));
    byte[] key =
        Files.readAllBytes(ClusterCertificates.nodeDir(out, "10.0.0.5").resolve("node.key"));

    Run again = certs("--out", out.toString(), "--nodes", "10.0.0.6,10.0.0.5");
    assertEquals(1, again.code);
    assertEquals(
        "tensorcache certs: "
            + ClusterCertificates.nodeDir(out, "10.0.0.5").resolve("node.key")
            + " and 3 more files already exist; nothing was written (--force replaces node and"
            + " client files)\n",
        again.err);
    assertFalse(Files.exists(ClusterCertificates.nodeDir(out, "10.0.0.6")), "nothing was written");

    Run added = certs("--out", out.toString(), "--nodes", "10.0.0.6");
    assertEquals(0, added.code, added.err);
    assertTrue(added.out.startsWith("reused cluster CA " + out.resolve("ca.crt")), added.out);
    assertFalse(added.out.contains("wrote  " + out.resolve("ca.crt")), added.out);
    assertDoesNotThrow(
        () ->
            TlsFiles.check(
                files(ClusterCertificates.nodeDir(out, "10.0.0.6")), "10.0.0.6", Instant.now()));
    assertArrayEquals(
        ca, Files.readAllBytes(ClusterCertificates.nodeDir(out, "10.0.0.6").resolve("ca.crt")));

    Run forced = certs("--out", out.toString(), "--nodes", "10.0.0.5", "--force");
    assertEquals(0, forced.code, forced.err);
    assertArrayEquals(ca, Files.readAllBytes(out.resolve("ca.crt")), "the CA is kept");
    assertNotEquals(
        new String(key, StandardCharsets.US_ASCII),
        Files.readString(ClusterCertificates.nodeDir(out, "10.0.0.5").resolve("node.key")));
  }

  @Test
  void helpAndBadInputWriteNothing() {
    Path out = dir.resolve("certs");
    Run help = certs("--help", "--out", out.toString(), "--nodes", "a");
    assertEquals(0, help.code);
    assertTrue(help.out.contains("--nodes=HOST"), help.out);
    Run bad = certs("--out", out.toString(), "--nodes", "10.0.0.5,bad_host!");
    assertEquals(1, bad.code);
    assertEquals(
        "tensorcache certs: node host 'bad_host!' is neither an IP address nor a DNS name\n",
        bad.err);
    Run small = certs("--out", out.toString(), "--nodes", "a", "--key-bits", "1024");
    assertEquals("tensorcache certs: --key-bits 1024: expected 2048..8192\n", small.err);
    assertFalse(Files.exists(out), "nothing may be written");
  }

  private static TlsFiles.NodeFiles files(Path nodeDir) {
    return new TlsFiles.NodeFiles(
        nodeDir.resolve("node.key"), nodeDir.resolve("node.crt"), nodeDir.resolve("ca.crt"));
  }

  private record Run(int code, String out, String err) {}

  private static Run certs(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "certs";
    System.arraycopy(args, 0, all, 1, args.length);
    StringWriter err = new StringWriter();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream previous = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      CommandLine cli = Main.commandLine().setErr(new PrintWriter(err));
      cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
      int code = cli.execute(all);
      return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
    } finally {
      System.setOut(previous);
    }
  }
}
