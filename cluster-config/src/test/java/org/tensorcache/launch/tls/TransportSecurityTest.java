package org.tensorcache.launch.tls;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.lookup.PemFiles;
import org.tensorcache.launch.NodeLauncher;

/**
 * The start-up checks of a node's transport: the files of the tls profile (each error names the
 * file), hostnames, and {@code tensorcache.security.required}.
 */
class TransportSecurityTest {
  private static final Instant NOW = Instant.now();
  @TempDir static Path shared;
  @TempDir Path dir;
  private static Path certs;
  private static Path foreign;

  @BeforeAll
  static void makeCertificates() throws IOException {
    certs = shared.resolve("certs");
    foreign = shared.resolve("foreign");
    ClusterCertificates.write(request(certs, "127.0.0.1"), NOW);
    ClusterCertificates.write(request(foreign, "127.0.0.1"), NOW);
  }

  @Test
  void theCertsCommandsFilesPassAndTheyAreWhatTheTlsProfileReads() {
    Path node = nodeDir();
    Config config = tls(node, "127.0.0.1", Map.of());
    assertDoesNotThrow(() -> TransportSecurity.check(config, NOW));
    assertEquals("tls-tcp", TransportSecurity.transport(config));
    String engine = "pekko.remote.artery.ssl.rotating-keys-engine.";
    assertEquals(node.resolve("node.key").toString(), config.getString(engine + "key-file"));
    assertEquals(node.resolve("node.crt").toString(), config.getString(engine + "cert-file"));
    assertEquals(node.resolve("ca.crt").toString(), config.getString(engine + "ca-cert-file"));
    assertEquals("TLSv1.3", config.getString(engine + "protocol"));
    assertFalse(TransportSecurity.required(config), "the tls profile does not force required");
  }

  @Test
  void aMissingFileIsNamed() throws IOException {
    for (String name : List.of("node.key", "node.crt", "ca.crt")) {
      Path node = nodeDir();
      Files.delete(node.resolve(name));
      assertRefused(node, node.resolve(name) + " does not exist");
    }
  }

  @Test
  void aFileThatIsNoPemKeyOrCertificateIsNamed() throws IOException {
    for (String name : List.of("node.key", "node.crt", "ca.crt")) {
      Path node = nodeDir();
      Files.writeString(node.resolve(name), "-----BEGIN GARBAGE-----\nnot base64 !!\n");
      String message = refusal(node, "127.0.0.1");
      assertTrue(message.contains(node.resolve(name) + " is not a"), message);
    }
    Path node = nodeDir();
    Files.copy(
        node.resolve("node.crt"), node.resolve("node.key"), StandardCopyOption.REPLACE_EXISTING);
    assertRefused(node, node.resolve("node.key") + " is not a private key Pekko reads");
  }

  @Test
  void aCertificateOfAnotherCaIsNamedWithTheCa() throws IOException {
    Path node = nodeDir();
    Files.copy(
        foreign.resolve("ca.crt"), node.resolve("ca.crt"), StandardCopyOption.REPLACE_EXISTING);
    assertRefused(
        node,
        "node certificate "
            + node.resolve("node.crt")
            + " was not issued by the CA in "
            + node.resolve("ca.crt"));
  }

  @Test
  void aKeyOfAnotherCertificateIsNamed() throws IOException {
    Path node = nodeDir();
    Path other = ClusterCertificates.nodeDir(foreign, "127.0.0.1").resolve("node.key");
    Files.copy(other, node.resolve("node.key"), StandardCopyOption.REPLACE_EXISTING);
    assertRefused(
        node,
        "node key "
            + node.resolve("node.key")
            + " is not the key of node certificate "
            + node.resolve("node.crt"));
  }

  @Test
  void anExpiredOrNotYetValidCertificateIsNamed() throws IOException {
    Path node = nodeDir();
    CertificateAuthority ca =
        CertificateAuthority.of(
            PemFiles.certificate(node.resolve("ca.crt"), "CA"),
            PemFiles.rsaPrivateKey(certs.resolve("ca.key"), "CA key"));
    Instant past = NOW.minus(Duration.ofDays(10));
    CertificateAuthority.Issued old =
        ca.issueNode("tensorcache", "127.0.0.1", past, past.plus(Duration.ofDays(2)), 2048);
    Files.writeString(node.resolve("node.crt"), PemFiles.pem(old.certificate()));
    Files.writeString(node.resolve("node.key"), PemFiles.pem(old.key()));
    assertRefused(node, "node certificate " + node.resolve("node.crt") + " expired on ");

    Instant future = NOW.plus(Duration.ofDays(2));
    CertificateAuthority.Issued early =
        ca.issueNode("tensorcache", "127.0.0.1", future, future.plus(Duration.ofDays(2)), 2048);
    Files.writeString(node.resolve("node.crt"), PemFiles.pem(early.certificate()));
    Files.writeString(node.resolve("node.key"), PemFiles.pem(early.key()));
    assertRefused(node, "node certificate " + node.resolve("node.crt") + " is not valid before ");
  }

  @Test
  void aCertificateThatDoesNotNameTheNodesHostIsRefusedUnlessHostnamesAreNotVerified() {
    Path node = nodeDir();
    String message = refusal(node, "10.1.2.3");
    assertTrue(
        message.startsWith(
            "node certificate "
                + node.resolve("node.crt")
                + " does not name this node's host 10.1.2.3 (it names IP:127.0.0.1, DNS:localhost)"),
        message);
    Config unverified =
        tls(node, "10.1.2.3", Map.of(TransportSecurity.HOSTNAME_VERIFICATION, "off"));
    assertDoesNotThrow(() -> TransportSecurity.check(unverified, NOW));
    assertDoesNotThrow(() -> TransportSecurity.check(tls(node, "localhost", Map.of()), NOW));
  }

  @Test
  void requiredRefusesTcpAndAeronNamingThemAndAcceptsTls() {
    Map<String, Object> on = Map.of(TransportSecurity.REQUIRED, "on");
    Config tcp = NodeLauncher.config(List.of("cluster", "h2"), on, dir);
    TransportSecurityException e =
        assertThrows(TransportSecurityException.class, () -> TransportSecurity.check(tcp, NOW));
    assertEquals(
        "tensorcache.security.required is on but the transport is tcp"
            + " (pekko.remote.artery.transport): plain TCP is not encrypted; start the node with"
            + " --profile tls",
        e.getMessage());
    Config aeron = NodeLauncher.config(List.of("aeron", "cluster", "h2"), on, dir);
    e = assertThrows(TransportSecurityException.class, () -> TransportSecurity.check(aeron, NOW));
    assertTrue(
        e.getMessage()
            .contains(
                "the transport is aeron-udp (pekko.remote.artery.transport):"
                    + " Aeron UDP has no encryption"),
        e.getMessage());
    assertDoesNotThrow(() -> TransportSecurity.check(tls(nodeDir(), "127.0.0.1", on), NOW));

    // the launcher checks before it starts anything, and off is the default
    e = assertThrows(TransportSecurityException.class, () -> NodeLauncher.startClient(tcp));
    assertTrue(e.getMessage().contains("transport is tcp"), e.getMessage());
    Config plain = NodeLauncher.config(List.of("cluster", "h2"), Map.of(), dir);
    assertFalse(TransportSecurity.required(plain));
    assertDoesNotThrow(() -> TransportSecurity.check(plain, NOW));
  }

  /** A fresh copy of the node directory of 127.0.0.1 from the certs command's output. */
  private Path nodeDir() {
    Path source = ClusterCertificates.nodeDir(certs, "127.0.0.1");
    Path copy = dir.resolve("node-" + System.nanoTime());
    try {
      Files.createDirectories(copy);
      try (var files = Files.list(source)) {
        for (Path f : files.toList()) {
          Files.copy(f, copy.resolve(f.getFileName()));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return copy;
  }

  private Config tls(Path tlsDir, String host, Map<String, Object> extra) {
    Map<String, Object> overrides = new HashMap<>(extra);
    overrides.put("tensorcache.security.tls.dir", tlsDir.toString());
    overrides.put("pekko.remote.artery.canonical.hostname", host);
    return NodeLauncher.config(List.of("tls", "cluster", "h2"), overrides, dir.resolve("data"));
  }

  private String refusal(Path tlsDir, String host) {
    Config config = tls(tlsDir, host, Map.of());
    return assertThrows(
            TransportSecurityException.class, () -> TransportSecurity.check(config, NOW))
        .getMessage();
  }

  private void assertRefused(Path tlsDir, String expected) {
    String message = refusal(tlsDir, "127.0.0.1");
    assertTrue(message.contains(expected), message);
  }

  private static ClusterCertificates.Request request(Path out, String... hosts) {
    return new ClusterCertificates.Request(
        out, List.of(hosts), List.of(), "tensorcache", 90, 180, 2048, false);
  }
}
