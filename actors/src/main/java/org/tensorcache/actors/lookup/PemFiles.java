package org.tensorcache.actors.lookup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;

/**
 * PEM files of keys and certificates, read and written for both TLS setups of a node: the lookup
 * port's, with the JDK alone (certificate chains, unencrypted PKCS#8 keys of RSA, EC or EdDSA, as
 * {@code openssl} writes them), and Artery's, exactly as Pekko's {@code
 * RotatingKeysSSLEngineProvider} reads them (so a file that passes {@link #certificate} and {@link
 * #rsaPrivateKey} is one Artery accepts). Written in the format both read: a private key as
 * unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}), a certificate as {@code BEGIN CERTIFICATE}, one
 * PEM block per file; keys readable by their owner only. Every error is an {@link IOException} that
 * names the file and what was expected of it.
 */
public final class PemFiles {
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";
  private static final String CERT_BEGIN = "-----BEGIN CERTIFICATE-----";
  private static final String CERT_END = "-----END CERTIFICATE-----";
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> PUBLIC =
      PosixFilePermissions.fromString("rw-r--r--");
  private static final Set<PosixFilePermission> OWNER_DIR =
      PosixFilePermissions.fromString("rwx------");

  private PemFiles() {}

  /**
   * The X.509 certificate in {@code file}, PEM or DER, the first if there are several, as Pekko
   * reads it; {@code what} names it in errors ("node certificate").
   */
  public static X509Certificate certificate(Path file, String what) throws IOException {
    byte[] bytes = read(file, what);
    try (InputStream in = new ByteArrayInputStream(bytes)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    } catch (CertificateException | IOException | ClassCastException e) {
      throw new IOException(what + " " + file + " is not a PEM X.509 certificate: " + reason(e), e);
    }
  }

  /** The certificates of a PEM file, at least one, in file order (a chain: the leaf first). */
  public static List<X509Certificate> certificates(Path file, String what) throws IOException {
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
          what + " " + file + " holds no certificate, expected " + CERT_BEGIN + " blocks");
    }
    return out;
  }

  /** The unencrypted PKCS#8 private key (RSA, EC or EdDSA) of a PEM file, as the JDK reads it. */
  public static PrivateKey privateKey(Path file, String what) throws IOException {
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
      } catch (InvalidKeySpecException | NoSuchAlgorithmException e) {
        // try the next algorithm
      }
    }
    throw new IOException(what + " " + file + " is no RSA, EC or EdDSA PKCS#8 private key");
  }

  /**
   * The private key in {@code file} as Artery reads it: an unencrypted RSA key, PKCS#8 ({@code
   * BEGIN PRIVATE KEY}) or PKCS#1 ({@code BEGIN RSA PRIVATE KEY}), the one PEM block of the file.
   */
  public static PrivateKey rsaPrivateKey(Path file, String what) throws IOException {
    String text = new String(read(file, what), StandardCharsets.UTF_8);
    try {
      return DERPrivateKeyLoader.load(PEMDecoder.decode(text));
    } catch (Exception e) { // Scala code: an InvalidKeySpecException is thrown undeclared
      throw new IOException(
          what
              + " "
              + file
              + " is not a private key Pekko reads (one PEM block of an unencrypted RSA key,"
              + " 'PRIVATE KEY' or 'RSA PRIVATE KEY'): "
              + reason(e),
          e);
    }
  }

  /** {@code key} as unencrypted PKCS#8 PEM ({@code BEGIN PRIVATE KEY}). */
  public static String pem(PrivateKey key) {
    if (!"PKCS#8".equals(key.getFormat())) {
      throw new IllegalArgumentException("expected a PKCS#8 key, got " + key.getFormat());
    }
    return block("PRIVATE KEY", key.getEncoded());
  }

  /** {@code certificate} as PEM ({@code BEGIN CERTIFICATE}). */
  public static String pem(X509Certificate certificate) {
    try {
      return block("CERTIFICATE", certificate.getEncoded());
    } catch (CertificateEncodingException e) {
      throw new IllegalArgumentException("certificate cannot be encoded: " + e.getMessage(), e);
    }
  }

  /** Writes {@code key} to {@code file} (PKCS#8 PEM), readable by the owner only (mode 600). */
  public static void writeKey(Path file, PrivateKey key) throws IOException {
    write(file, pem(key), OWNER_ONLY);
  }

  /** Writes {@code certificate} to {@code file} (PEM), readable by everyone (mode 644). */
  public static void writeCertificate(Path file, X509Certificate certificate) throws IOException {
    write(file, pem(certificate), PUBLIC);
  }

  /**
   * Writes {@code text} to {@code file} with {@code permissions} from the start (a key is never
   * readable by others, not even for a moment), through a temporary file renamed into place.
   */
  private static void write(Path file, String text, Set<PosixFilePermission> permissions)
      throws IOException {
    Path dir = file.getParent();
    Path tmp;
    if (posix(dir)) {
      tmp =
          Files.createTempFile(
              dir,
              "." + file.getFileName(),
              ".tmp",
              PosixFilePermissions.asFileAttribute(permissions));
    } else {
      tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    }
    try {
      Files.writeString(tmp, text, StandardCharsets.US_ASCII);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Makes {@code dir} and its missing parents, readable by the owner only (they hold keys); an
   * existing directory is left as it is.
   */
  public static Path directory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      if (dir.getParent() != null) {
        directory(dir.getParent());
      }
      try {
        if (posix(dir.toAbsolutePath().getParent())) {
          Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
        } else {
          Files.createDirectory(dir);
        }
      } catch (FileAlreadyExistsException e) {
        // made by someone else in between: fine, if it is a directory
        if (!Files.isDirectory(dir)) {
          throw e;
        }
      }
    }
    return dir;
  }

  private static boolean posix(Path dir) {
    return dir != null && dir.getFileSystem().supportedFileAttributeViews().contains("posix");
  }

  private static String block(String label, byte[] der) {
    String base64 =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + label + "-----\n" + base64 + "\n-----END " + label + "-----\n";
  }

  private static byte[] read(Path file, String what) throws IOException {
    if (!Files.exists(file)) {
      throw new IOException(what + " " + file + " does not exist");
    }
    if (!Files.isRegularFile(file)) {
      throw new IOException(what + " " + file + " is not a file");
    }
    if (!Files.isReadable(file)) {
      throw new IOException(what + " " + file + " is not readable by this user");
    }
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IOException("cannot read the " + what + " " + file + ": " + e, e);
    }
    if (bytes.length == 0) {
      throw new IOException(what + " " + file + " is empty");
    }
    return bytes;
  }

  /** The PEM blocks only: CertificateFactory refuses text between them in some JDKs. */
  private static ByteArrayInputStream stripped(byte[] pem) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    StringBuilder out = new StringBuilder();
    for (int at = text.indexOf(CERT_BEGIN); at >= 0; ) {
      int end = text.indexOf(CERT_END, at);
      if (end < 0) {
        break;
      }
      end += CERT_END.length();
      out.append(text, at, end).append('\n');
      at = text.indexOf(CERT_BEGIN, end);
    }
    return new ByteArrayInputStream(out.toString().getBytes(StandardCharsets.US_ASCII));
  }

  private static String reason(Exception e) {
    Throwable t = e;
    while (t.getCause() != null && (t.getMessage() == null || t.getMessage().isBlank())) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }
}
