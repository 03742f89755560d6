package org.tensorcache.actors.lookup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS material of the lookup port from PEM files, with the JDK alone: X.509 certificates (a chain,
 * or the CA certificates to trust) and an unencrypted PKCS#8 private key (RSA, EC or EdDSA), as
 * {@code openssl} and {@code ./tensorcache certs} write them. Every error names the file and what
 * was expected of it.
 */
final class PemFiles {
  /** The only protocol the lookup port speaks. */
  static final String TLS_1_3 = "TLSv1.3";

  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";
  private static final char[] NO_PASSWORD = new char[0];

  private PemFiles() {}

  /**
   * A TLS 1.3 context that presents {@code chain} with {@code key} (either may be null for a client
   * without a certificate) and trusts the CA certificates of {@code trusted}.
   */
  static SSLContext context(Path chain, Path key, Path trusted, String what) throws IOException {
    try {
      KeyManagerFactory kmf = null;
      if (chain != null) {
        List<X509Certificate> certificates = certificates(chain, what + " certificate");
        PrivateKey privateKey = privateKey(key, what + " private key");
        checkPair(certificates.get(0), chain, privateKey, key);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("key", privateKey, NO_PASSWORD, certificates.toArray(new Certificate[0]));
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, NO_PASSWORD);
      }
      KeyStore ts = KeyStore.getInstance("PKCS12");
      ts.load(null, null);
      int i = 0;
      for (X509Certificate ca : certificates(trusted, what + " CA certificate")) {
        ts.setCertificateEntry("ca-" + i++, ca);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      SSLContext context = SSLContext.getInstance(TLS_1_3);
      context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot set up TLS for the " + what + ": " + e.getMessage(), e);
    }
  }

  /** The certificates of a PEM file, at least one, in file order (a chain: the leaf first). */
  static List<X509Certificate> certificates(Path file, String what) throws IOException {
    byte[] bytes = read(file, what);
    Collection<? extends Certificate> read;
    try {
      read = CertificateFactory.getInstance("X.509").generateCertificates(stripped(bytes));
    } catch (CertificateException e) {
      throw new IOException(
          what + " " + file + " is no PEM X.509 certificate file: " + e.getMessage(), e);
    }
    List<X509Certificate> out = new ArrayList<>();
    for (Certificate c : read) {
      out.add((X509Certificate) c);
    }
    if (out.isEmpty()) {
      throw new IOException(
          what + " " + file + " holds no certificate, expected -----BEGIN CERTIFICATE----- blocks");
    }
    return out;
  }

  /** The unencrypted PKCS#8 private key of a PEM file. */
  static PrivateKey privateKey(Path file, String what) throws IOException {
    if (file == null) {
      throw new IOException(what + " is missing: a certificate needs its private key");
    }
    String text = new String(read(file, what), StandardCharsets.US_ASCII);
    int begin = text.indexOf(KEY_BEGIN);
    int end = text.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      String found =
          text.contains("-----BEGIN RSA PRIVATE KEY-----")
                  || text.contains("-----BEGIN EC PRIVATE KEY-----")
              ? "a PKCS#1 or SEC1 key (convert it: openssl pkcs8 -topk8 -nocrypt -in KEY -out"
                  + " KEY.pk8)"
              : text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
                  ? "an encrypted key (decrypt it: openssl pkcs8 -topk8 -nocrypt -in KEY -out"
                      + " KEY.pk8)"
                  : "no private key";
      throw new IOException(
          what + " " + file + " holds " + found + ", expected an unencrypted PKCS#8 " + KEY_BEGIN);
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end));
    } catch (IllegalArgumentException e) {
      throw new IOException(what + " " + file + " is not valid base64: " + e.getMessage(), e);
    }
    for (String algorithm : List.of("RSA", "EC", "EdDSA", "RSASSA-PSS")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
        // try the next algorithm
      }
    }
    throw new IOException(what + " " + file + " is no RSA, EC or EdDSA PKCS#8 private key");
  }

  /** Checks that {@code key} signs what the certificate's public key verifies. */
  private static void checkPair(X509Certificate leaf, Path chain, PrivateKey key, Path keyFile)
      throws IOException {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm(); // EdDSA, Ed25519, Ed448, RSASSA-PSS need no digest name
        };
    byte[] probe = "tensorcache".getBytes(StandardCharsets.US_ASCII);
    boolean matches;
    try {
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(leaf.getPublicKey());
      verify.update(probe);
      matches = verify.verify(signature);
    } catch (GeneralSecurityException e) {
      matches = false;
    }
    if (!matches) {
      throw new IOException(
          "private key " + keyFile + " does not belong to the first certificate of " + chain);
    }
  }

  private static byte[] read(Path file, String what) throws IOException {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IOException("cannot read the " + what + " " + file + ": " + e, e);
    }
  }

  /** The PEM blocks only: CertificateFactory refuses text between them in some JDKs. */
  private static ByteArrayInputStream stripped(byte[] pem) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    StringBuilder out = new StringBuilder();
    for (int at = text.indexOf("-----BEGIN CERTIFICATE-----"); at >= 0; ) {
      int end = text.indexOf("-----END CERTIFICATE-----", at);
      if (end < 0) {
        break;
      }
      end += "-----END CERTIFICATE-----".length();
      out.append(text, at, end).append('\n');
      at = text.indexOf("-----BEGIN CERTIFICATE-----", end);
    }
    return new ByteArrayInputStream(out.toString().getBytes(StandardCharsets.US_ASCII));
  }
}
