package org.tensorcache.launch.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.lookup.PemFiles;

/**
 * The checks of a node's key, certificate and CA certificate before it starts: Pekko 1.x reads them
 * only at the first connection and then fails every connection, with nothing said at start.
 */
public final class TlsFiles {
  private static final Logger log = LoggerFactory.getLogger(TlsFiles.class);
  private static final Duration EXPIRY_WARNING = Duration.ofDays(30);
  private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
  private static final int SAN_DNS = 2;
  private static final int SAN_IP = 7;

  private TlsFiles() {}

  /** A node's private key, its certificate and the certificate of the CA that issued it. */
  public record NodeFiles(Path keyFile, Path certFile, Path caCertFile) {}

  /**
   * Checks that the three files exist, are readable and parse as Pekko reads them, that the key is
   * the certificate's, that the CA is a CA and issued (signed) the certificate, that both are valid
   * at {@code now}, that the certificate serves TLS clients and servers and has a name peers can
   * share, and, when {@code host} is not null, that the certificate names {@code host}.
   *
   * @return the node certificate
   * @throws TransportSecurityException naming the file and what is wrong with it
   */
  public static X509Certificate check(NodeFiles files, String host, Instant now) {
    X509Certificate ca;
    X509Certificate cert;
    PrivateKey key;
    try {
      ca = PemFiles.certificate(files.caCertFile(), "CA certificate");
      cert = PemFiles.certificate(files.certFile(), "node certificate");
      key = PemFiles.rsaPrivateKey(files.keyFile(), "node key");
    } catch (IOException e) {
      throw new TransportSecurityException(e.getMessage(), e);
    }
    Path caFile = files.caCertFile();
    Path certFile = files.certFile();
    if (ca.getBasicConstraints() < 0) {
      throw new TransportSecurityException(
          "CA certificate " + caFile + " is no CA certificate (" + subject(ca) + ", CA:false)");
    }
    valid(ca, "CA certificate " + caFile, now);
    issuedBy(cert, certFile, ca, caFile);
    valid(cert, "node certificate " + certFile, now);
    requireKeyOf(key, cert, "node key " + files.keyFile(), "node certificate " + certFile);
    usableForTls(cert, certFile);
    if (host != null && !names(cert, host)) {
      throw new TransportSecurityException(
          "node certificate "
              + certFile
              + " does not name this node's host "
              + host
              + " (it names "
              + String.join(", ", alternativeNames(cert))
              + "): peers verify it; make one with './tensorcache certs --nodes "
              + host
              + "' or set tensorcache.security.tls.hostname-verification = off");
    }
    Instant notAfter = cert.getNotAfter().toInstant();
    if (notAfter.isBefore(now.plus(EXPIRY_WARNING))) {
      log.warn("node certificate {} expires on {}: replace it soon", certFile, notAfter);
    }
    log.info(
        "TLS: node certificate {} ({}; {}) until {}, issued by {}",
        certFile,
        subject(cert),
        String.join(", ", alternativeNames(cert)),
        notAfter,
        subject(ca));
    return cert;
  }

  /** Whether {@code cert} names {@code host} as an HTTPS client checks it (RFC 2818, 6125). */
  public static boolean names(X509Certificate cert, String host) {
    List<String> dns = new ArrayList<>();
    List<InetAddress> ips = new ArrayList<>();
    for (List<?> san : sans(cert)) {
      int type = (Integer) san.get(0);
      if (type == SAN_DNS) {
        dns.add(((String) san.get(1)).toLowerCase(Locale.ROOT));
      } else if (type == SAN_IP) {
        literal((String) san.get(1)).ifPresent(ips::add);
      }
    }
    Optional<InetAddress> ip = literal(host);
    if (ip.isPresent()) {
      return ips.contains(ip.get());
    }
    String name = host.toLowerCase(Locale.ROOT);
    if (dns.isEmpty()) {
      // as the JDK's check: the CN only when there is no DNS name
      return name.equalsIgnoreCase(commonName(cert));
    }
    return dns.stream().anyMatch(pattern -> dnsMatches(pattern, name));
  }

  /** The subject alternative names of {@code cert} as {@code DNS:name} and {@code IP:address}. */
  public static List<String> alternativeNames(X509Certificate cert) {
    List<String> out = new ArrayList<>();
    for (List<?> san : sans(cert)) {
      int type = (Integer) san.get(0);
      if (type == SAN_DNS) {
        out.add("DNS:" + san.get(1));
      } else if (type == SAN_IP) {
        out.add("IP:" + san.get(1));
      }
    }
    if (out.isEmpty()) {
      out.add("no alternative names");
    }
    return out;
  }

  private static void issuedBy(
      X509Certificate cert, Path certFile, X509Certificate ca, Path caFile) {
    try {
      cert.verify(ca.getPublicKey());
    } catch (GeneralSecurityException e) {
      throw new TransportSecurityException(
          "node certificate "
              + certFile
              + " was not issued by the CA in "
              + caFile
              + " (its signature does not verify with the CA's key; issuer "
              + cert.getIssuerX500Principal().getName()
              + ", CA "
              + subject(ca)
              + ")",
          e);
    }
  }

  private static void valid(X509Certificate cert, String what, Instant now) {
    try {
      cert.checkValidity(Date.from(now));
    } catch (CertificateExpiredException e) {
      throw new TransportSecurityException(
          what + " expired on " + cert.getNotAfter().toInstant(), e);
    } catch (CertificateNotYetValidException e) {
      throw new TransportSecurityException(
          what + " is not valid before " + cert.getNotBefore().toInstant(), e);
    }
  }

  private static void usableForTls(X509Certificate cert, Path certFile) {
    try {
      List<String> usage = cert.getExtendedKeyUsage();
      if (usage != null && !(usage.contains(SERVER_AUTH) && usage.contains(CLIENT_AUTH))) {
        throw new TransportSecurityException(
            "node certificate "
                + certFile
                + " is not for both TLS servers and clients (extended key usage "
                + usage
                + "): every node is both");
      }
    } catch (CertificateParsingException e) {
      throw new TransportSecurityException(
          "node certificate " + certFile + " has a malformed extended key usage", e);
    }
    if (commonName(cert) == null && sans(cert).stream().noneMatch(s -> s.get(0).equals(SAN_DNS))) {
      throw new TransportSecurityException(
          "node certificate "
              + certFile
              + " has neither a common name nor a DNS name: Pekko accepts a peer only if it shares"
              + " one of these names");
    }
  }

  /**
   * Checks that {@code key} is the private key of {@code cert}.
   *
   * @throws TransportSecurityException "{@code keyWhat} is not the key of {@code certWhat}"
   */
  static void requireKeyOf(PrivateKey key, X509Certificate cert, String keyWhat, String certWhat) {
    if (!belongTogether(key, cert.getPublicKey())) {
      throw new TransportSecurityException(keyWhat + " is not the key of " + certWhat);
    }
  }

  private static boolean belongTogether(PrivateKey key, PublicKey publicKey) {
    byte[] probe = "tensorcache key check".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature sign = Signature.getInstance("SHA256withRSA");
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance("SHA256withRSA");
      verify.initVerify(publicKey);
      verify.update(probe);
      return verify.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static boolean dnsMatches(String pattern, String name) {
    if (pattern.startsWith("*.")) {
      int dot = name.indexOf('.');
      return dot > 0 && name.substring(dot).equals(pattern.substring(1));
    }
    return pattern.equals(name);
  }

  private static Optional<InetAddress> literal(String host) {
    boolean v4 = host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    boolean v6 = host.contains(":") && host.matches("[0-9A-Fa-f:.]+");
    if (!v4 && !v6) {
      return Optional.empty();
    }
    try {
      return Optional.of(InetAddress.getByName(host)); // a literal: no name lookup
    } catch (UnknownHostException e) {
      return Optional.empty();
    }
  }

  private static Collection<List<?>> sans(X509Certificate cert) {
    try {
      Collection<List<?>> names = cert.getSubjectAlternativeNames();
      return names == null ? List.of() : names;
    } catch (CertificateParsingException e) {
      throw new TransportSecurityException(
          "certificate " + subject(cert) + " has malformed subject alternative names", e);
    }
  }

  private static String commonName(X509Certificate cert) {
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          return rdn.getValue().toString();
        }
      }
      return null;
    } catch (InvalidNameException e) {
      return null;
    }
  }

  private static String subject(X509Certificate cert) {
    return cert.getSubjectX500Principal().getName();
  }
}
