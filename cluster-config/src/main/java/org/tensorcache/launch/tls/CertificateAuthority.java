package org.tensorcache.launch.tls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A root certificate authority that issues RSA node and client certificates: what {@code
 * ./tensorcache certs} makes. Node certificates name their host (an IP address or a DNS name, plus
 * {@code localhost} and {@code 127.0.0.1} for a loopback host) and serve TLS servers and clients;
 * client certificates serve clients only.
 */
public final class CertificateAuthority {
  private static final String SIGNATURE = "SHA256withRSA";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final X509Certificate certificate;
  private final PrivateKey key;

  private CertificateAuthority(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
  }

  /** A key and the certificate that goes with it. */
  public record Issued(X509Certificate certificate, PrivateKey key) {}

  /** A new self-signed CA named {@code commonName}, valid from {@code from} to {@code to}. */
  public static CertificateAuthority create(
      String commonName, Instant from, Instant to, int keyBits) {
    KeyPair pair = keyPair(keyBits);
    X500Principal name = new X500Principal("CN=" + escape(commonName));
    try {
      JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  name, serial(), date(from), date(to), name, pair.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
              .addExtension(
                  Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  utils.createSubjectKeyIdentifier(pair.getPublic()));
      return new CertificateAuthority(sign(builder, pair.getPrivate()), pair.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException("cannot make the CA certificate: " + e.getMessage(), e);
    }
  }

  /**
   * The CA of {@code certificate} and its {@code key}, as read back from files.
   *
   * @throws IllegalArgumentException if the certificate is no CA's
   */
  public static CertificateAuthority of(X509Certificate certificate, PrivateKey key) {
    if (certificate.getBasicConstraints() < 0) {
      throw new IllegalArgumentException(
          certificate.getSubjectX500Principal().getName() + " is no CA certificate (CA:false)");
    }
    return new CertificateAuthority(certificate, key);
  }

  /** The CA's certificate. */
  public X509Certificate certificate() {
    return certificate;
  }

  /** The CA's private key. */
  public PrivateKey key() {
    return key;
  }

  /**
   * A node certificate named {@code commonName} (shared by every node of a cluster: Pekko accepts a
   * peer only if it shares a name) for {@code host}, for TLS servers and clients, valid from {@code
   * from} to {@code to} or the CA's end, whichever comes first.
   */
  public Issued issueNode(String commonName, String host, Instant from, Instant to, int keyBits) {
    GeneralNames names = new GeneralNames(subjectAlternativeNames(host));
    ExtendedKeyUsage usage =
        new ExtendedKeyUsage(
            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth});
    return issue(commonName, names, usage, from, to, keyBits);
  }

  /** A client certificate named {@code name}, for TLS clients only. */
  public Issued issueClient(String name, Instant from, Instant to, int keyBits) {
    return issue(
        name, null, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth), from, to, keyBits);
  }

  /**
   * The names a node certificate for {@code host} carries: the host (an IP address or a DNS name),
   * and for a loopback host also {@code localhost} and {@code 127.0.0.1}.
   */
  public static List<String> namesFor(String host) {
    Set<String> names = new LinkedHashSet<>();
    names.add(host);
    if (isLoopback(host)) {
      names.add("localhost");
      names.add("127.0.0.1");
    }
    return new ArrayList<>(names);
  }

  /** Whether {@code host} is an IP address literal (IPv4 or IPv6) rather than a DNS name. */
  public static boolean isIpAddress(String host) {
    return org.bouncycastle.util.IPAddress.isValid(host);
  }

  private static boolean isLoopback(String host) {
    return host.equalsIgnoreCase("localhost")
        || host.startsWith("127.")
        || host.equals("::1")
        || host.equals("0:0:0:0:0:0:0:1");
  }

  private static GeneralName[] subjectAlternativeNames(String host) {
    return namesFor(host).stream()
        .map(n -> new GeneralName(isIpAddress(n) ? GeneralName.iPAddress : GeneralName.dNSName, n))
        .toArray(GeneralName[]::new);
  }

  private Issued issue(
      String commonName,
      GeneralNames names,
      ExtendedKeyUsage usage,
      Instant from,
      Instant to,
      int keyBits) {
    KeyPair pair = keyPair(keyBits);
    Instant end =
        to.isAfter(certificate.getNotAfter().toInstant())
            ? certificate.getNotAfter().toInstant()
            : to;
    X500Principal subject = new X500Principal("CN=" + escape(commonName));
    try {
      JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  certificate, serial(), date(from), date(end), subject, pair.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
              .addExtension(Extension.extendedKeyUsage, false, usage)
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  utils.createSubjectKeyIdentifier(pair.getPublic()))
              .addExtension(
                  Extension.authorityKeyIdentifier,
                  false,
                  utils.createAuthorityKeyIdentifier(certificate));
      if (names != null) {
        builder.addExtension(Extension.subjectAlternativeName, false, names);
      }
      return new Issued(sign(builder, key), pair.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException(
          "cannot make the certificate of " + commonName + ": " + e.getMessage(), e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e.getMessage(), e);
    }
  }

  private static KeyPair keyPair(int bits) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(bits, RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot make an RSA key of " + bits + " bits", e);
    }
  }

  /** A random positive serial of 127 bits (RFC 5280: at most 20 octets, unpredictable). */
  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).setBit(0);
  }

  private static Date date(Instant instant) {
    return Date.from(instant);
  }

  private static String escape(String value) {
    return value.replaceAll("([,+\"\\\\<>;=#])", "\\\\$1");
  }
}
