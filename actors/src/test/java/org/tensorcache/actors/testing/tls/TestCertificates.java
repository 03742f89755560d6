package org.tensorcache.actors.testing.tls;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A test CA that writes PEM files as {@code openssl} does: its certificate, and certificates it
 * signs for {@code localhost} and {@code 127.0.0.1} (a node's, usable by clients as well) with
 * their unencrypted PKCS#8 private keys, EC P-256 or RSA 2048.
 */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private final String name;
  private final KeyPair keys;
  private final X509Certificate certificate;

  /** A pair of PEM files: a certificate and its private key. */
  public record Issued(Path certificate, Path privateKey) {}

  private TestCertificates(String name) {
    this.name = name;
    this.keys = keyPair(false);
    X500Name subject = new X500Name("CN=" + name);
    try {
      this.certificate =
          sign(
              builder(subject, subject, keys)
                  .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                  .addExtension(
                      Extension.keyUsage,
                      true,
                      new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)),
              keys.getPrivate());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A new CA named {@code name}. */
  public static TestCertificates ca(String name) {
    return new TestCertificates(name);
  }

  /** Writes the CA's certificate to {@code file}. */
  public Path writeCertificate(Path file) throws IOException {
    return write(file, pem("CERTIFICATE", encoded(certificate)));
  }

  /**
   * A certificate for {@code cn}, naming {@code localhost} and {@code 127.0.0.1}, for servers and
   * clients, signed by this CA: {@code dir/<cn>.pem} and {@code dir/<cn>.key} (RSA with {@code
   * rsa}, else EC P-256).
   */
  public Issued issue(String cn, Path dir, boolean rsa) throws IOException {
    KeyPair pair = keyPair(rsa);
    try {
      JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
      X509Certificate leaf =
          sign(
              builder(new X500Name("CN=" + name), new X500Name("CN=" + cn), pair)
                  .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                  .addExtension(
                      Extension.subjectAlternativeName,
                      false,
                      new GeneralNames(
                          new GeneralName[] {
                            new GeneralName(GeneralName.dNSName, "localhost"),
                            new GeneralName(GeneralName.iPAddress, "127.0.0.1")
                          }))
                  .addExtension(
                      Extension.extendedKeyUsage,
                      false,
                      new ExtendedKeyUsage(
                          new KeyPurposeId[] {
                            KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                          }))
                  .addExtension(
                      Extension.authorityKeyIdentifier,
                      false,
                      utils.createAuthorityKeyIdentifier(certificate)),
              keys.getPrivate());
      Path cert = write(dir.resolve(cn + ".pem"), pem("CERTIFICATE", encoded(leaf)));
      Path key =
          write(dir.resolve(cn + ".key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
      return new Issued(cert, key);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair pair)
      throws IOException {
    Instant now = Instant.now();
    try {
      return new JcaX509v3CertificateBuilder(
              issuer,
              BigInteger.valueOf(SERIAL.incrementAndGet()),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(now.plus(Duration.ofDays(2))),
              subject,
              pair.getPublic())
          .addExtension(
              Extension.subjectKeyIdentifier,
              false,
              new JcaX509ExtensionUtils().createSubjectKeyIdentifier(pair.getPublic()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey) {
    String algorithm = issuerKey.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(builder.build(new JcaContentSignerBuilder(algorithm).build(issuerKey)));
    } catch (OperatorCreationException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static KeyPair keyPair(boolean rsa) {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance(rsa ? "RSA" : "EC");
      if (rsa) {
        g.initialize(2048);
      } else {
        g.initialize(new ECGenParameterSpec("secp256r1"));
      }
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static byte[] encoded(X509Certificate c) {
    try {
      return c.getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static Path write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    return Files.writeString(file, text, StandardCharsets.US_ASCII);
  }
}
