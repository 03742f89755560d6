package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.testing.tls.TestCertificates;

/**
 * The lookup port's credentials from files: PEM certificates and PKCS#8 keys (EC and RSA) make a
 * TLS 1.3 context, and every file that is missing or not what it should be is named; tokens are
 * read whole and compared exactly.
 */
class LookupSecurityTest {
  @TempDir Path dir;

  @Test
  void pemFilesOfEcAndRsaKeysMakeATls13Context() throws Exception {
    TestCertificates ca = TestCertificates.ca("test-ca");
    Path caFile = ca.writeCertificate(dir.resolve("ca.pem"));
    for (boolean rsa : new boolean[] {false, true}) {
      TestCertificates.Issued node = ca.issue(rsa ? "rsa" : "ec", dir, rsa);
      LookupSecurity s =
          LookupSecurity.builder()
              .optCertificate(node.certificate(), node.privateKey())
              .optTrust(caFile)
              .build();
      assertEquals("TLSv1.3", s.tls().orElseThrow().getProtocol());
      assertTrue(s.token().isEmpty());
    }
    assertTrue(LookupSecurity.builder().optTrust(caFile).build().tls().isPresent(), "CA only");
    assertTrue(LookupSecurity.builder().build().tls().isEmpty());
  }

  @Test
  void aFileThatIsMissingOrWrongIsNamed() throws Exception {
    TestCertificates ca = TestCertificates.ca("test-ca");
    Path caFile = ca.writeCertificate(dir.resolve("ca.pem"));
    TestCertificates.Issued node = ca.issue("node", dir, false);
    TestCertificates.Issued other = ca.issue("other", dir, false);
    Path missing = dir.resolve("missing.pem");

    String m = failure(node.certificate(), node.privateKey(), missing);
    assertTrue(m.contains("lookup port CA certificate " + missing), m);
    m = failure(missing, node.privateKey(), caFile);
    assertTrue(m.contains("lookup port certificate " + missing), m);
    m = failure(node.certificate(), dir.resolve("missing.key"), caFile);
    assertTrue(m.contains("lookup port private key " + dir.resolve("missing.key")), m);

    m = failure(node.certificate(), node.certificate(), caFile); // a certificate as the key
    assertTrue(m.contains("expected an unencrypted PKCS#8 -----BEGIN PRIVATE KEY-----"), m);
    Path pkcs1 = dir.resolve("pkcs1.key");
    Files.writeString(
        pkcs1,
        Files.readString(node.privateKey())
            .replace("BEGIN PRIVATE KEY", "BEGIN EC PRIVATE KEY")
            .replace("END PRIVATE KEY", "END EC PRIVATE KEY"));
    m = failure(node.certificate(), pkcs1, caFile);
    assertTrue(m.contains(pkcs1 + " holds a PKCS#1 or SEC1 key (convert it: openssl pkcs8"), m);
    m = failure(node.privateKey(), node.privateKey(), caFile); // a key as the certificate
    assertTrue(m.contains(node.privateKey() + " holds no certificate"), m);
    m = failure(node.certificate(), other.privateKey(), caFile);
    assertEquals(
        "private key "
            + other.privateKey()
            + " does not belong to the first certificate of "
            + node.certificate(),
        m);
  }

  @Test
  void tokensAreReadWholeAndComparedExactly() throws Exception {
    Path file = Files.writeString(dir.resolve("token"), "  s3cret-token\n");
    LookupSecurity s = LookupSecurity.builder().optTokenFile(file).build();
    assertEquals("s3cret-token", s.token().orElseThrow());
    assertTrue(s.tokenMatches("s3cret-token"));
    assertFalse(s.tokenMatches("s3cret-toke"));
    assertFalse(s.tokenMatches("s3cret-token "));
    assertFalse(s.tokenMatches(""));
    assertFalse(LookupSecurity.none().tokenMatches("s3cret-token"));

    Path empty = Files.writeString(dir.resolve("empty"), "\n");
    var e =
        assertThrows(IOException.class, () -> LookupSecurity.builder().optTokenFile(empty).build());
    assertEquals("the lookup port's token file " + empty + " is empty", e.getMessage());
    Path none = dir.resolve("none");
    e = assertThrows(IOException.class, () -> LookupSecurity.builder().optTokenFile(none).build());
    assertTrue(
        e.getMessage().startsWith("cannot read the lookup port's token file " + none),
        e.getMessage());
  }

  @Test
  void settingsNameTheirKeys() {
    var base =
        ConfigFactory.parseString(
                "pekko.remote.artery.canonical.hostname = \"127.0.0.1\"\n"
                    + "tensorcache.lookup.endpoint.tls.enabled = on\n"
                    + "tensorcache.lookup.endpoint.tls.certificate = /c.pem\n")
            .withFallback(ConfigFactory.defaultReference());
    var e =
        assertThrows(
            IllegalArgumentException.class, () -> LookupEndpoint.Settings.create(base.resolve()));
    assertEquals(
        "tensorcache.lookup.endpoint.tls.private-key is empty, expected a PEM file with TLS on",
        e.getMessage());
    var plain =
        LookupEndpoint.Settings.create(
            ConfigFactory.parseString("pekko.remote.artery.canonical.hostname = \"h\"")
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    assertEquals(Duration.ofSeconds(10), plain.readTimeout());
    assertEquals(Duration.ofSeconds(60), plain.idleTimeout());
    assertEquals(Duration.ofSeconds(10), plain.handshakeTimeout());
    assertEquals(null, plain.tokenFile());
    assertEquals(null, plain.tls());
    assertEquals(64, plain.maxConnections());
  }

  private static String failure(Path cert, Path key, Path trust) {
    return assertThrows(
            IOException.class,
            () -> LookupSecurity.builder().optCertificate(cert, key).optTrust(trust).build())
        .getMessage();
  }
}
