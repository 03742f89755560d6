package org.tensorcache.actors.lookup;

import java.io.IOException;
import java.net.ProtocolException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * The credentials of one side of the lookup port: TLS 1.3 material from PEM files (this side's
 * certificate chain and private key, and the CA certificates it trusts for the other side) and a
 * bearer token. A node presents its certificate and requires a client certificate from its client
 * CA; a client presents its certificate and verifies the node's against the CA that signed it, host
 * name or IP address included. Built once; the files are read by {@link Builder#build}.
 */
public final class LookupSecurity {
  /** The only protocol the lookup port speaks. */
  static final String TLS_1_3 = "TLSv1.3";

  private static final char[] NO_PASSWORD = new char[0];
  private static final LookupSecurity NONE = new LookupSecurity(null, null);

  private final SSLContext tls;
  private final String token;

  private LookupSecurity(SSLContext tls, String token) {
    this.tls = tls;
    this.token = token;
  }

  /** No TLS and no token: the port as it has always been. */
  public static LookupSecurity none() {
    return NONE;
  }

  /** A builder: every part is optional. */
  public static Builder builder() {
    return new Builder();
  }

  /** The TLS 1.3 context, when this side speaks TLS. */
  public Optional<SSLContext> tls() {
    return Optional.ofNullable(tls);
  }

  /** The token, when there is one. */
  public Optional<String> token() {
    return Optional.ofNullable(token);
  }

  /**
   * A refusal for want of credentials, which the metrics count under {@code rejection}; its message
   * starts with {@link LookupRefusedException#UNAUTHORIZED}, so that clients can tell it apart.
   */
  static final class Unauthorized extends ProtocolException {
    private static final long serialVersionUID = 1L;

    /** Why a connection that has not authenticated is refused, whatever it asked. */
    static final String NOT_AUTHENTICATED =
        "this port needs an AUTH request (op 6, protocol version 3) with its token first";

    final String rejection;

    Unauthorized(String reason, String rejection) {
      super(LookupRefusedException.UNAUTHORIZED + reason);
      this.rejection = rejection;
    }
  }

  /** Checks an AUTH's token; a port without a token takes any, a wrong one is refused. */
  void authenticate(String presented) throws Unauthorized {
    if (token != null && !tokenMatches(presented)) {
      throw new Unauthorized("wrong token", "token");
    }
  }

  /**
   * Whether {@code presented} is the token: the SHA-256 digests of both are compared in constant
   * time, so the time taken tells nothing of the token or its length.
   */
  boolean tokenMatches(String presented) {
    return token != null
        && MessageDigest.isEqual(
            sha256(presented.getBytes(StandardCharsets.UTF_8)),
            sha256(token.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * The TLS socket of a client over {@code socket} (closing it closes {@code socket}): TLS 1.3, and
   * the node's certificate must be signed by a trusted CA and name {@code host} (its host name or
   * IP address). The handshake is left to the first read or write, or to {@link
   * SSLSocket#startHandshake}.
   */
  public SSLSocket clientSocket(Socket socket, String host) throws IOException {
    return wrap(socket, host, false);
  }

  /** The TLS socket of a node over {@code socket}: TLS 1.3, a client certificate required. */
  public SSLSocket nodeSocket(Socket socket) throws IOException {
    return wrap(socket, null, true);
  }

  private SSLSocket wrap(Socket socket, String host, boolean node) throws IOException {
    if (tls == null) {
      throw new IllegalStateException("no TLS material given for the lookup port");
    }
    SSLSocket s =
        (SSLSocket) tls.getSocketFactory().createSocket(socket, host, socket.getPort(), true);
    SSLParameters p = tls.getDefaultSSLParameters();
    p.setProtocols(new String[] {TLS_1_3});
    if (node) {
      s.setUseClientMode(false);
      p.setNeedClientAuth(true);
    } else {
      s.setUseClientMode(true);
      p.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host
    }
    s.setSSLParameters(p);
    return s;
  }

  private static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** Reads a token file: its text without surrounding white space, which must leave something. */
  static String readToken(Path file) throws IOException {
    String token;
    try {
      token = Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new IOException("cannot read the lookup port's token file " + file + ": " + e, e);
    }
    if (token.isEmpty()) {
      throw new IOException("the lookup port's token file " + file + " is empty");
    }
    if (token.getBytes(StandardCharsets.UTF_8).length > 0xffff) {
      throw new IOException(
          "the lookup port's token file " + file + " holds over 65535 bytes, expected a token");
    }
    return token;
  }

  /** Collects the parts; {@link #build} reads the files. */
  public static final class Builder {
    private Path certificate;
    private Path privateKey;
    private Path trusted;
    private String token;
    private Path tokenFile;

    private Builder() {}

    /**
     * This side's certificate chain (PEM, the leaf first) and its unencrypted PKCS#8 private key
     * (PEM): required on a node, and on a client of a node that speaks TLS.
     */
    public Builder optCertificate(Path certificateChain, Path privateKeyFile) {
      this.certificate = certificateChain;
      this.privateKey = privateKeyFile;
      return this;
    }

    /**
     * The CA certificates (PEM) trusted for the other side: a node's client CA, or for a client the
     * CA that signed the nodes' certificates. Given, this side speaks TLS 1.3.
     */
    public Builder optTrust(Path caCertificates) {
      this.trusted = caCertificates;
      return this;
    }

    /** The token, as text. */
    public Builder optToken(String token) {
      this.token = token;
      return this;
    }

    /** The token from a file (its text, without surrounding white space). */
    public Builder optTokenFile(Path file) {
      this.tokenFile = file;
      return this;
    }

    /**
     * Reads the files; an {@link IOException} names the file that is missing, unreadable or not
     * what it should be.
     */
    public LookupSecurity build() throws IOException {
      if (certificate != null && trusted == null) {
        throw new IOException(
            "a certificate without CA certificates to trust, expected both for TLS: "
                + certificate);
      }
      String t = token;
      if (tokenFile != null) {
        t = readToken(tokenFile);
      } else if (t != null && t.strip().isEmpty()) {
        throw new IOException("an empty token, expected the port's token");
      }
      SSLContext context =
          trusted == null ? null : context(certificate, privateKey, trusted, "lookup port");
      return context == null && t == null ? NONE : new LookupSecurity(context, t);
    }
  }

  /**
   * A TLS 1.3 context that presents {@code chain} with {@code key} (either may be null for a client
   * without a certificate) and trusts the CA certificates of {@code trusted}.
   */
  private static SSLContext context(Path chain, Path key, Path trusted, String what)
      throws IOException {
    try {
      KeyManagerFactory kmf = null;
      if (chain != null) {
        List<X509Certificate> certificates = PemFiles.certificates(chain, what + " certificate");
        PrivateKey privateKey = PemFiles.privateKey(key, what + " private key");
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
      for (X509Certificate ca : PemFiles.certificates(trusted, what + " CA certificate")) {
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
}
