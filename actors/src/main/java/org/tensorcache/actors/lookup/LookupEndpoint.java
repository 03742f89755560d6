package org.tensorcache.actors.lookup;

import com.typesafe.config.Config;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's binary lookup port for processes that are no cluster members: a socket server that
 * decodes each request with {@link LookupWire}, serves it through the node's {@link LocalLookup} on
 * the connection's own thread (a gather from the replica, with no actor message or Artery hop in
 * between when every value is there) and encodes the reply. One thread per connection, up to a
 * bound that idle clients cannot exhaust ({@link PortConnections}). With {@link LookupSecurity}
 * material it speaks TLS 1.3 with client certificates, and with a token it serves a connection only
 * after an AUTH that presents it.
 */
public final class LookupEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LookupEndpoint.class);

  /**
   * {@code tensorcache.lookup.endpoint}: {@code port < 0} is off, 0 any free port; {@code
   * tokenFile} null for no token; {@code tls} null for plain TCP.
   */
  public record Settings(
      String host,
      int port,
      int maxConnections,
      Duration readTimeout,
      Duration idleTimeout,
      Duration handshakeTimeout,
      Path tokenFile,
      Tls tls) {
    /** TLS material: this node's certificate chain and private key, and the client CA (PEM). */
    public record Tls(Path certificate, Path privateKey, Path clientCa) {}

    /** Reads the settings; an empty host is the node's canonical Artery hostname. */
    public static Settings create(Config config) {
      Config c = config.getConfig("tensorcache.lookup.endpoint");
      String host = c.getString("host");
      if (host.isEmpty()) {
        host = config.getString("pekko.remote.artery.canonical.hostname");
      }
      int port = c.getInt("port");
      int max = c.getInt("max-connections");
      if (port > 65535 || max < 1) {
        throw new IllegalArgumentException(
            String.format(
                "tensorcache.lookup.endpoint: port %d and max-connections %d, expected a port up to"
                    + " 65535 (-1 off, 0 any) and at least 1 connection",
                port, max));
      }
      Duration[] timeouts = new Duration[3];
      String[] names = {"read-timeout", "idle-timeout", "handshake-timeout"};
      for (int i = 0; i < names.length; i++) {
        timeouts[i] = c.getDuration(names[i]);
        if (timeouts[i].isNegative() || timeouts[i].isZero()) {
          throw new IllegalArgumentException(
              "tensorcache.lookup.endpoint." + names[i] + " " + timeouts[i] + ", expected > 0");
        }
      }
      String token = c.getString("token-file");
      Tls tls = null;
      if (c.getBoolean("tls.enabled")) {
        tls =
            new Tls(
                file(c, "tls.certificate"), file(c, "tls.private-key"), file(c, "tls.client-ca"));
      }
      return new Settings(
          host,
          port,
          max,
          timeouts[0],
          timeouts[1],
          timeouts[2],
          token.isEmpty() ? null : Path.of(token),
          tls);
    }

    private static Path file(Config c, String key) {
      String f = c.getString(key);
      if (f.isEmpty()) {
        throw new IllegalArgumentException(
            "tensorcache.lookup.endpoint." + key + " is empty, expected a PEM file with TLS on");
      }
      return Path.of(f);
    }

    /** Reads the token file and the TLS material; an error names the file at fault. */
    LookupSecurity security() throws IOException {
      LookupSecurity.Builder b = LookupSecurity.builder();
      if (tls != null) {
        b.optCertificate(tls.certificate(), tls.privateKey()).optTrust(tls.clientCa());
      }
      if (tokenFile != null) {
        b.optTokenFile(tokenFile);
      }
      return b.build();
    }
  }

  private final ServerSocket server;
  private final LocalLookup lookup;
  private final SessionPort sessions;
  private final Settings settings;
  private final LookupSecurity security;
  private final int maxRequest;
  private final PortConnections connections;
  private final Semaphore refusals;
  private volatile boolean closed;

  private LookupEndpoint(
      ServerSocket server, LocalLookup lookup, Settings settings, LookupSecurity security) {
    this.server = server;
    this.lookup = lookup;
    this.sessions = new SessionPort(lookup.system(), lookup);
    this.settings = settings;
    this.security = security;
    this.maxRequest = LookupWire.maxRequest(lookup.settings().maxBatch());
    Duration shortest = settings.readTimeout();
    for (Duration d : List.of(settings.idleTimeout(), settings.handshakeTimeout())) {
      shortest = d.compareTo(shortest) < 0 ? d : shortest;
    }
    Duration tick = shortest.dividedBy(4);
    tick = tick.toMillis() < 10 ? Duration.ofMillis(10) : tick;
    this.connections =
        new PortConnections(
            settings.maxConnections(),
            tick.compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1) : tick);
    this.refusals = new Semaphore(settings.maxConnections());
  }

  /**
   * Reads the endpoint's TLS material and token, binds its port and serves lookups through {@code
   * lookup}; a file that is missing or not what it should be is an {@link IOException} naming it.
   */
  public static LookupEndpoint start(LocalLookup lookup, Settings endpoint) throws IOException {
    LookupSecurity security = endpoint.security();
    ServerSocket server = new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getByName(endpoint.host()), endpoint.port()));
    } catch (IOException e) {
      server.close();
      throw new IOException(
          "cannot bind the lookup endpoint to " + endpoint.host() + ":" + endpoint.port(), e);
    }
    LookupEndpoint ep = new LookupEndpoint(server, lookup, endpoint, security);
    Thread accept = new Thread(ep::acceptLoop, "tensorcache-lookup-endpoint");
    accept.setDaemon(true);
    accept.start();
    log.info(
        "lookup endpoint {}: {}, {}",
        ep.address(),
        security.tls().isPresent() ? "TLS 1.3 with client certificates" : "plain TCP",
        security.token().isPresent() ? "token required" : "no token");
    return ep;
  }

  /** Where the endpoint listens. */
  public InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  /** Stops accepting and closes every connection; clients move to another node. */
  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      log.debug("closing the lookup endpoint: {}", e.toString());
    }
    connections.close();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (IOException e) {
        if (!closed) {
          log.error("lookup endpoint {} stopped accepting: {}", address(), e.toString());
        }
        return;
      }
      // the TLS handshake and the AUTH are due within the handshake timeout, else the first request
      boolean vetted = security.tls().isPresent() || security.token().isPresent();
      Duration first = vetted ? settings.handshakeTimeout() : settings.idleTimeout();
      LookupConnection connection =
          new LookupConnection(
              socket,
              System.nanoTime() + first.toNanos(),
              lookup,
              sessions,
              settings,
              security,
              maxRequest,
              connections);
      if (!connections.admit(connection)) {
        lookup.metrics().portRefused();
        refuse(socket);
        continue;
      }
      lookup.metrics().portAccepted();
      Thread t = new Thread(connection, "tensorcache-lookup-" + socket.getPort());
      t.setDaemon(true);
      t.start();
    }
  }

  /**
   * Answers a connection at the cap with FAILED, before reading anything; under TLS after the
   * handshake, on a thread of its own (at most as many at once as the cap, the others are closed).
   */
  private void refuse(Socket socket) {
    String message =
        "lookup endpoint "
            + address()
            + " already serves "
            + settings.maxConnections()
            + " connections";
    if (security.tls().isEmpty()) {
      sendRefusal(socket, socket, message);
      return;
    }
    if (!refusals.tryAcquire()) {
      closeQuietly(socket);
      return;
    }
    Thread t =
        new Thread(
            () -> {
              try {
                socket.setSoTimeout((int) settings.handshakeTimeout().toMillis());
                SSLSocket tls = security.nodeSocket(socket);
                tls.startHandshake();
                sendRefusal(tls, socket, message);
              } catch (IOException e) {
                log.debug("refusing a lookup connection: {}", e.toString());
                closeQuietly(socket);
              } finally {
                refusals.release();
              }
            },
            "tensorcache-lookup-refusal");
    t.setDaemon(true);
    t.start();
  }

  private static void sendRefusal(Socket over, Socket socket, String message) {
    try (socket;
        over) {
      LookupFrames frames = new LookupFrames();
      frames.send(
          LookupReplies.encodeError(frames, LookupWire.FAILED, message), over.getOutputStream());
    } catch (IOException e) {
      log.debug("refusing a lookup connection: {}", e.toString());
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      log.debug("closing a lookup connection: {}", e.toString());
    }
  }
}
