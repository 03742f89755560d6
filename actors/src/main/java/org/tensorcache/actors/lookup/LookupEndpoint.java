package org.tensorcache.actors.lookup;

import com.typesafe.config.Config;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's binary lookup port for processes that are no cluster members: a socket server that
 * decodes each request with {@link LookupWire}, serves it through the node's {@link LocalLookup} on
 * the connection's own thread (a gather from the replica, with no actor message or Artery hop in
 * between when every value is there) and encodes the reply. One thread per connection, up to a
 * bound.
 */
public final class LookupEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LookupEndpoint.class);

  /** {@code tensorcache.lookup.endpoint}: {@code port < 0} is off, 0 any free port. */
  public record Settings(String host, int port, int maxConnections) {
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
      return new Settings(host, port, max);
    }
  }

  private final ServerSocket server;
  private final LocalLookup lookup;
  private final SessionPort sessions;
  private final int maxConnections;
  private final int maxRequest;
  private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private LookupEndpoint(ServerSocket server, LocalLookup lookup, int maxConnections) {
    this.server = server;
    this.lookup = lookup;
    this.sessions = new SessionPort(lookup.system(), lookup);
    this.maxConnections = maxConnections;
    this.maxRequest = LookupWire.maxRequest(lookup.settings().maxBatch());
  }

  /** Binds the port of {@code endpoint} and serves lookups through {@code lookup}. */
  public static LookupEndpoint start(LocalLookup lookup, Settings endpoint) throws IOException {
    ServerSocket server = new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getByName(endpoint.host()), endpoint.port()));
    } catch (IOException e) {
      server.close();
      throw new IOException(
          "cannot bind the lookup endpoint to " + endpoint.host() + ":" + endpoint.port(), e);
    }
    LookupEndpoint ep = new LookupEndpoint(server, lookup, endpoint.maxConnections());
    Thread accept = new Thread(ep::acceptLoop, "tensorcache-lookup-endpoint");
    accept.setDaemon(true);
    accept.start();
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
    connections.forEach(LookupEndpoint::closeQuietly);
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
      if (connections.size() >= maxConnections) {
        lookup.metrics().portRefused();
        refuse(socket);
        continue;
      }
      connections.add(socket);
      lookup.metrics().portAccepted();
      Thread t = new Thread(() -> serve(socket), "tensorcache-lookup-" + socket.getPort());
      t.setDaemon(true);
      t.start();
    }
  }

  private void refuse(Socket socket) {
    try (socket) {
      LookupFrames frames = new LookupFrames();
      String message =
          "lookup endpoint " + address() + " already serves " + maxConnections + " connections";
      frames.send(
          LookupWire.encodeError(frames, LookupWire.FAILED, message), socket.getOutputStream());
    } catch (IOException e) {
      log.debug("refusing a connection: {}", e.toString());
    }
  }

  private void serve(Socket socket) {
    LookupFrames frames = new LookupFrames();
    try (socket) {
      socket.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(socket.getInputStream(), 64 << 10);
      OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
      while (!closed) {
        ByteBuffer reply;
        try {
          reply = answer(LookupWire.decodeRequest(frames.read(in, maxRequest)), frames);
        } catch (ProtocolException e) {
          frames.send(LookupWire.encodeError(frames, LookupWire.PROTOCOL, e.getMessage()), out);
          return;
        }
        frames.send(reply, out);
      }
    } catch (EOFException | SocketException e) {
      // the client went away, or the endpoint is closing
    } catch (IOException e) {
      log.warn("lookup connection from {} failed: {}", socket.getRemoteSocketAddress(), e);
    } finally {
      connections.remove(socket);
      lookup.metrics().portClosed();
    }
  }

  private ByteBuffer answer(LookupWire.Request request, LookupFrames frames) {
    String cacheId = request.cacheId();
    long started = System.nanoTime();
    try {
      if (request.op() == LookupWire.DESCRIBE) {
        return LookupWire.encodeSpec(frames, lookup.spec(cacheId));
      }
      if (request.session() != null) {
        return PortLookups.served(lookup, request, started, sessions.answer(request, frames));
      }
      long[] indices = request.indices();
      var spec = lookup.spec(cacheId);
      LookupValues.checkVersionCarries(request.version(), cacheId, spec);
      LookupChecks.checkSize(cacheId, indices, lookup.settings());
      LookupWire.checkReplySize(cacheId, spec, indices.length);
      Object[] values = LookupChecks.newValues(spec, indices.length);
      lookup.lookupInto(cacheId, indices, values);
      return PortLookups.served(
          lookup,
          request,
          started,
          LookupValues.encodeValues(frames, request.version(), spec, values));
    } catch (IllegalArgumentException e) {
      PortLookups.failed(lookup, request, e);
      return LookupWire.encodeError(frames, LookupWire.BAD_REQUEST, e.getMessage());
    } catch (LookupFailedException e) {
      PortLookups.failed(lookup, request, e);
      return LookupWire.encodeError(frames, LookupWire.FAILED, e.getMessage());
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
