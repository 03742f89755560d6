package org.tensorcache.launch.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import org.tensorcache.actors.lookup.PemFiles;

/**
 * The files of a cluster's certificates, as {@code ./tensorcache certs} writes them under one
 * directory: a cluster CA that issues the node certificates (Artery and the lookup port's server
 * side), a separate client CA that issues the lookup port's client certificates, and per node and
 * per client a directory with everything that machine needs. An existing CA in the directory is
 * reused, so nodes and clients can be added later; no file is replaced unless asked to.
 */
public final class ClusterCertificates {
  /** The cluster CA's certificate: in the directory, in every node's and every client's. */
  public static final String CA_CERT = "ca.crt";

  /** The cluster CA's key: only in the directory (it signs nodes; keep it off the nodes). */
  public static final String CA_KEY = "ca.key";

  /** The client CA's certificate: in the directory and every node's (the lookup port trusts it). */
  public static final String CLIENT_CA_CERT = "client-ca.crt";

  /** The client CA's key: only in the directory. */
  public static final String CLIENT_CA_KEY = "client-ca.key";

  /** A node's key, and its certificate, in {@code nodes/<host>/}. */
  public static final String NODE_KEY = "node.key";

  /** A node's certificate. */
  public static final String NODE_CERT = "node.crt";

  /** A client's key, and its certificate, in {@code clients/<name>/}. */
  public static final String CLIENT_KEY = "client.key";

  /** A client's certificate. */
  public static final String CLIENT_CERT = "client.crt";

  /** Certificates start this long before they are made, for clocks a little behind. */
  private static final Duration BACKDATE = Duration.ofHours(1);

  private ClusterCertificates() {}

  /**
   * What to make: under {@code out}, a certificate for each of {@code nodes} (hosts: IP addresses
   * or DNS names) and {@code clients} (names), valid {@code days} days; new CAs valid {@code
   * caDays}; RSA keys of {@code keyBits}; {@code clusterName} the name every node certificate
   * shares; {@code force} replaces existing node and client files.
   */
  public record Request(
      Path out,
      List<String> nodes,
      List<String> clients,
      String clusterName,
      int days,
      int caDays,
      int keyBits,
      boolean force) {
    /** Checks every value, naming the bad one. */
    public Request {
      if (nodes.isEmpty()) {
        throw new IllegalArgumentException("no nodes: --nodes takes host,host,...");
      }
      checkNames(nodes, "node host", ClusterCertificates::checkHost);
      checkNames(clients, "client name", ClusterCertificates::checkClientName);
      if (clusterName.isBlank()) {
        throw new IllegalArgumentException("the cluster name is empty");
      }
      if (days < 1 || caDays < 1) {
        throw new IllegalArgumentException(
            "validity of " + Math.min(days, caDays) + " days, expected 1 or more");
      }
      if (keyBits < 2048 || keyBits > 8192) {
        throw new IllegalArgumentException("RSA keys of " + keyBits + " bits, expected 2048..8192");
      }
    }
  }

  /** A file written and what it holds. */
  public record Written(Path file, String what) {}

  /** What {@link #write} did: CAs it reused (one line each) and the files it wrote, in order. */
  public record Result(List<String> reused, List<Written> written) {}

  /** The directory of node {@code host} under {@code out}: what the node takes as its --tls-dir. */
  public static Path nodeDir(Path out, String host) {
    return out.resolve("nodes").resolve(host.replace(':', '_'));
  }

  /** The directory of client {@code name} under {@code out}. */
  public static Path clientDir(Path out, String name) {
    return out.resolve("clients").resolve(name);
  }

  /**
   * Makes what {@code request} asks for as of {@code now}: nothing is written if a file exists that
   * would be replaced without {@code force}, or if a CA in the directory is unusable.
   *
   * @throws IllegalArgumentException naming an existing file or an unusable CA; nothing written
   */
  public static Result write(Request request, Instant now) throws IOException {
    Path out = request.out();
    Instant from = now.minus(BACKDATE);
    Instant leafEnd = now.plus(Duration.ofDays(request.days()));
    Instant caEnd = now.plus(Duration.ofDays(request.caDays()));
    List<String> reused = new ArrayList<>();
    CertificateAuthority clusterCa = existing(out, CA_CERT, CA_KEY, "cluster CA", now, reused);
    CertificateAuthority clientCa =
        existing(out, CLIENT_CA_CERT, CLIENT_CA_KEY, "client CA", now, reused);

    List<Path> planned = new ArrayList<>();
    for (String host : request.nodes()) {
      for (String f : List.of(NODE_KEY, NODE_CERT, CA_CERT, CLIENT_CA_CERT)) {
        planned.add(nodeDir(out, host).resolve(f));
      }
    }
    for (String name : request.clients()) {
      for (String f : List.of(CLIENT_KEY, CLIENT_CERT, CA_CERT)) {
        planned.add(clientDir(out, name).resolve(f));
      }
    }
    if (!request.force()) {
      List<Path> existing = planned.stream().filter(Files::exists).toList();
      if (!existing.isEmpty()) {
        throw new IllegalArgumentException(
            existing.get(0)
                + (existing.size() > 1 ? " and " + (existing.size() - 1) + " more files" : "")
                + " already exist; nothing was written (--force replaces node and client files)");
      }
    }

    List<Written> written = new ArrayList<>();
    if (clusterCa == null) {
      clusterCa =
          CertificateAuthority.create(
              request.clusterName() + " cluster CA", from, caEnd, request.keyBits());
      writeCa(out, clusterCa, CA_CERT, CA_KEY, "cluster CA", written);
    }
    if (clientCa == null) {
      clientCa =
          CertificateAuthority.create(
              request.clusterName() + " lookup client CA", from, caEnd, request.keyBits());
      writeCa(out, clientCa, CLIENT_CA_CERT, CLIENT_CA_KEY, "client CA (lookup port)", written);
    }
    for (String host : request.nodes()) {
      CertificateAuthority.Issued node =
          clusterCa.issueNode(request.clusterName(), host, from, leafEnd, request.keyBits());
      Path dir = PemFiles.directory(nodeDir(out, host));
      String what = "node " + host;
      writeKey(dir.resolve(NODE_KEY), node, what, written);
      writeCertificate(
          dir.resolve(NODE_CERT),
          node.certificate(),
          what
              + " certificate ("
              + String.join(", ", TlsFiles.alternativeNames(node.certificate()))
              + "; until "
              + until(node.certificate())
              + ")",
          written);
      writeCertificate(
          dir.resolve(CA_CERT), clusterCa.certificate(), what + ": the cluster CA", written);
      writeCertificate(
          dir.resolve(CLIENT_CA_CERT), clientCa.certificate(), what + ": the client CA", written);
    }
    for (String name : request.clients()) {
      CertificateAuthority.Issued client =
          clientCa.issueClient(name, from, leafEnd, request.keyBits());
      Path dir = PemFiles.directory(clientDir(out, name));
      String what = "client " + name;
      writeKey(dir.resolve(CLIENT_KEY), client, what, written);
      writeCertificate(
          dir.resolve(CLIENT_CERT),
          client.certificate(),
          what + " certificate (until " + until(client.certificate()) + ")",
          written);
      writeCertificate(
          dir.resolve(CA_CERT),
          clusterCa.certificate(),
          what + ": the cluster CA (checks the nodes)",
          written);
    }
    return new Result(reused, written);
  }

  /** The CA in {@code out} if both its files are there, null if neither is. */
  private static CertificateAuthority existing(
      Path out, String certName, String keyName, String what, Instant now, List<String> reused) {
    Path cert = out.resolve(certName);
    Path key = out.resolve(keyName);
    boolean hasCert = Files.exists(cert);
    boolean hasKey = Files.exists(key);
    if (!hasCert && !hasKey) {
      return null;
    }
    if (hasCert != hasKey) {
      throw new IllegalArgumentException(
          (hasCert ? cert : key)
              + " exists but "
              + (hasCert ? key : cert)
              + " does not: a CA needs both (move the other away to make a new CA)");
    }
    try {
      X509Certificate certificate = PemFiles.certificate(cert, what + " certificate");
      CertificateAuthority ca =
          CertificateAuthority.of(certificate, PemFiles.rsaPrivateKey(key, what + " key"));
      TlsFiles.requireKeyOf(
          ca.key(), certificate, what + " key " + key, what + " certificate " + cert);
      if (certificate.getNotAfter().toInstant().isBefore(now)) {
        throw new IllegalArgumentException(
            what + " " + cert + " expired on " + certificate.getNotAfter().toInstant());
      }
      reused.add(what + " " + cert + " (until " + until(certificate) + ")");
      return ca;
    } catch (TransportSecurityException | IOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  private static void writeCa(
      Path out,
      CertificateAuthority ca,
      String certName,
      String keyName,
      String what,
      List<Written> written)
      throws IOException {
    PemFiles.directory(out);
    writeCertificate(
        out.resolve(certName),
        ca.certificate(),
        what + " certificate (until " + until(ca.certificate()) + ")",
        written);
    PemFiles.writeKey(out.resolve(keyName), ca.key());
    written.add(
        new Written(
            out.resolve(keyName), what + " key (signs certificates: keep it off the nodes)"));
  }

  private static void writeKey(
      Path file, CertificateAuthority.Issued issued, String what, List<Written> written)
      throws IOException {
    PemFiles.writeKey(file, issued.key());
    written.add(new Written(file, what + " key"));
  }

  private static void writeCertificate(
      Path file, X509Certificate certificate, String what, List<Written> written)
      throws IOException {
    PemFiles.writeCertificate(file, certificate);
    written.add(new Written(file, what));
  }

  private static String until(X509Certificate certificate) {
    return certificate.getNotAfter().toInstant().toString().substring(0, 10);
  }

  private static void checkNames(List<String> names, String what, Consumer<String> check) {
    Set<String> seen = new HashSet<>();
    for (String name : names) {
      check.accept(name);
      if (!seen.add(name.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(what + " '" + name + "' is given twice");
      }
    }
  }

  private static void checkHost(String host) {
    boolean dns =
        host.length() <= 253
            && host.matches(
                "(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");
    if (!dns && !CertificateAuthority.isIpAddress(host)) {
      throw new IllegalArgumentException(
          "node host '" + host + "' is neither an IP address nor a DNS name");
    }
  }

  private static void checkClientName(String name) {
    if (!name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
      throw new IllegalArgumentException(
          "client name '" + name + "', expected letters, digits, '.', '_' or '-' (at most 64)");
    }
  }
}
