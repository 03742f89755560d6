package org.tensorcache.launch.tls;

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
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Set;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;

/**
 * PEM files of keys and certificates, read exactly as Pekko's {@code RotatingKeysSSLEngineProvider}
 * reads them (so a file that passes here is one Artery accepts) and written in the format it reads:
 * a private key as unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}), a certificate as {@code BEGIN
 * CERTIFICATE}, one PEM block per file; keys readable by their owner only.
 */
public final class PemFiles {
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> PUBLIC =
      PosixFilePermissions.fromString("rw-r--r--");
  private static final Set<PosixFilePermission> OWNER_DIR =
      PosixFilePermissions.fromString("rwx------");

  private PemFiles() {}

  /**
   * The X.509 certificate in {@code file}; {@code what} names it in errors ("node certificate").
   *
   * @throws TransportSecurityException naming the file if it is missing, unreadable or no
   *     certificate
   */
  public static X509Certificate certificate(Path file, String what) {
    byte[] bytes = read(file, what);
    try (InputStream in = new ByteArrayInputStream(bytes)) {
      // what Pekko does: CertificateFactory reads the first certificate, PEM or DER
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    } catch (CertificateException | IOException | ClassCastException e) {
      throw new TransportSecurityException(
          what + " " + file + " is not a PEM X.509 certificate: " + reason(e), e);
    }
  }

  /**
   * The private key in {@code file}: an unencrypted RSA key, PKCS#8 ({@code BEGIN PRIVATE KEY}) or
   * PKCS#1 ({@code BEGIN RSA PRIVATE KEY}), the one PEM block of the file.
   *
   * @throws TransportSecurityException naming the file if it is missing, unreadable or no such key
   */
  public static PrivateKey privateKey(Path file, String what) {
    String text = new String(read(file, what), StandardCharsets.UTF_8);
    try {
      return DERPrivateKeyLoader.load(PEMDecoder.decode(text));
    } catch (Exception e) { // Scala code: an InvalidKeySpecException is thrown undeclared
      throw new TransportSecurityException(
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

  private static byte[] read(Path file, String what) {
    if (!Files.exists(file)) {
      throw new TransportSecurityException(what + " " + file + " does not exist");
    }
    if (!Files.isRegularFile(file)) {
      throw new TransportSecurityException(what + " " + file + " is not a file");
    }
    if (!Files.isReadable(file)) {
      throw new TransportSecurityException(what + " " + file + " is not readable by this user");
    }
    try {
      byte[] bytes = Files.readAllBytes(file);
      if (bytes.length == 0) {
        throw new TransportSecurityException(what + " " + file + " is empty");
      }
      return bytes;
    } catch (IOException e) {
      throw new TransportSecurityException(what + " " + file + " cannot be read: " + e, e);
    }
  }

  private static String reason(Exception e) {
    Throwable t = e;
    while (t.getCause() != null && (t.getMessage() == null || t.getMessage().isBlank())) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }
}
