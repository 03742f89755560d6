package org.tensorcache.launch.tls;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;

/**
 * What a node checks of its transport before its ActorSystem starts: that the transport is
 * encrypted when {@code tensorcache.security.required} is on, and that the key and certificate
 * files of the {@code tls} profile are there, belong together and are valid.
 */
public final class TransportSecurity {
  /** {@code on}: a node refuses to start on any transport but mutually authenticated TLS. */
  public static final String REQUIRED = "tensorcache.security.required";

  /** {@code on} (default): a node checks that a peer's certificate names the host it dialled. */
  public static final String HOSTNAME_VERIFICATION =
      "tensorcache.security.tls.hostname-verification";

  private static final String ARTERY = "pekko.remote.artery.";
  private static final String ROTATING = ARTERY + "ssl.rotating-keys-engine.";
  private static final Set<String> PEM_PROVIDERS =
      Set.of(
          ClusterTlsEngineProvider.class.getName(),
          "org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider");

  private TransportSecurity() {}

  /**
   * Checks {@code config} as a node about to start with it.
   *
   * @throws TransportSecurityException naming the transport, setting or file that is wrong
   */
  public static void check(Config config) {
    check(config, Instant.now());
  }

  /** Checks {@code config} as of {@code now}. */
  static void check(Config config, Instant now) {
    if (config.getString("pekko.actor.provider").equals("local")) {
      return; // no remoting: nothing leaves the process
    }
    String transport = transport(config);
    if (required(config)) {
      requireEncrypted(config, transport);
    }
    if (transport.equals("tls-tcp") && usesPemFiles(config)) {
      TlsFiles.NodeFiles files =
          new TlsFiles.NodeFiles(
              path(config, ROTATING + "key-file"),
              path(config, ROTATING + "cert-file"),
              path(config, ROTATING + "ca-cert-file"));
      try {
        TlsFiles.check(files, verifiedHost(config), now);
      } catch (TransportSecurityException e) {
        if (e.getMessage().endsWith(" does not exist")) {
          throw new TransportSecurityException(
              e.getMessage()
                  + " (the tls profile reads node.key, node.crt and ca.crt from --tls-dir, by"
                  + " default <data-dir>/certs; './tensorcache certs' makes them)",
              e);
        }
        throw e;
      }
    }
  }

  /** The Artery transport of {@code config}, or {@code classic} if Artery is off. */
  public static String transport(Config config) {
    return config.getBoolean(ARTERY + "enabled")
        ? config.getString(ARTERY + "transport")
        : "classic";
  }

  /** Whether {@code config} has {@code tensorcache.security.required} on (default off). */
  public static boolean required(Config config) {
    return config.hasPath(REQUIRED) && config.getBoolean(REQUIRED);
  }

  private static void requireEncrypted(Config config, String transport) {
    String why =
        switch (transport) {
          case "tls-tcp" -> null;
          case "aeron-udp" -> "Aeron UDP has no encryption";
          case "tcp" -> "plain TCP is not encrypted";
          default -> "only Artery's tls-tcp transport is encrypted";
        };
    if (why != null) {
      throw new TransportSecurityException(
          REQUIRED
              + " is on but the transport is "
              + transport
              + " (pekko.remote.artery.transport): "
              + why
              + "; start the node with --profile tls");
    }
    if (!usesPemFiles(config)
        && !config.getBoolean(ARTERY + "ssl.config-ssl-engine.require-mutual-authentication")) {
      throw new TransportSecurityException(
          REQUIRED
              + " is on but pekko.remote.artery.ssl.config-ssl-engine.require-mutual-authentication"
              + " is off: a peer without a certificate would be accepted");
    }
  }

  private static boolean usesPemFiles(Config config) {
    return PEM_PROVIDERS.contains(config.getString(ARTERY + "ssl.ssl-engine-provider"));
  }

  /** The host a peer dials and checks against this node's certificate; null if none is checked. */
  private static String verifiedHost(Config config) {
    boolean ours =
        config
            .getString(ARTERY + "ssl.ssl-engine-provider")
            .equals(ClusterTlsEngineProvider.class.getName());
    if (!ours || !ClusterTlsEngineProvider.verifiesHostnames(config)) {
      return null;
    }
    String host = config.getString(ARTERY + "canonical.hostname");
    // Pekko's placeholders for the machine's address are resolved only at start
    return host.isEmpty() || host.startsWith("<") ? null : host;
  }

  private static Path path(Config config, String key) {
    String value = config.getString(key);
    if (value.isBlank()) {
      throw new TransportSecurityException(key + " is empty: the tls profile needs the file");
    }
    return Path.of(value);
  }
}
