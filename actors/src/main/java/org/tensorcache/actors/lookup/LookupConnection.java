package org.tensorcache.actors.lookup;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.NodeMetrics;

/**
 * One connection of the lookup port, served on its own thread: the TLS handshake, the AUTH when the
 * port has a token, then request after request, each read whole, answered and flushed before the
 * next is read. Each step sets the connection's deadline in {@link PortConnections}, whose reaper
 * closes it when the client is late.
 */
final class LookupConnection implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(LookupConnection.class);

  private static final int WAITING = 0, SERVING = 1, CLOSED = 2;
  static final long NO_DEADLINE = Long.MAX_VALUE;

  /** The TCP socket; closing it ends the connection, under TLS too, whatever its thread does. */
  final Socket socket;

  private final AtomicInteger state = new AtomicInteger(WAITING);

  /** By when the connection must have made progress, else {@link PortConnections} closes it. */
  volatile long deadline;

  /** Since when the connection waits for its next request. */
  volatile long waitingSince;

  /** Whether it completed a request: one that never did goes first at the cap. */
  volatile boolean served;

  private final LocalLookup lookup;
  private final SessionPort sessions;
  private final LookupEndpoint.Settings settings;
  private final LookupSecurity security;
  private final int maxRequest;
  private final PortConnections connections;

  /** Whether this connection's current request is counted in flight by the metrics. */
  private boolean inFlight;

  LookupConnection(
      Socket socket,
      long firstDeadline,
      LocalLookup lookup,
      SessionPort sessions,
      LookupEndpoint.Settings settings,
      LookupSecurity security,
      int maxRequest,
      PortConnections connections) {
    this.socket = socket;
    this.deadline = firstDeadline;
    this.waitingSince = System.nanoTime();
    this.lookup = lookup;
    this.sessions = sessions;
    this.settings = settings;
    this.security = security;
    this.maxRequest = maxRequest;
    this.connections = connections;
  }

  @Override
  public void run() {
    LookupFrames frames = new LookupFrames();
    SocketAddress peer = socket.getRemoteSocketAddress();
    try {
      socket.setTcpNoDelay(true);
      Socket s = socket;
      if (security.tls().isPresent()) {
        SSLSocket tls = security.nodeSocket(socket);
        tls.startHandshake();
        s = tls;
      }
      boolean authenticated = security.token().isEmpty();
      if (authenticated) {
        deadline = (after(settings.idleTimeout()));
      }
      BufferedInputStream in = new BufferedInputStream(s.getInputStream(), 64 << 10);
      OutputStream out = new BufferedOutputStream(s.getOutputStream(), 64 << 10);
      while (true) {
        in.mark(1);
        if (in.read() < 0) {
          return; // the client closed the connection between requests
        }
        in.reset();
        if (authenticated) {
          deadline = (after(settings.readTimeout())); // the rest of the frame is due by then
        }
        ByteBuffer reply;
        ProtocolException refusal = null;
        try {
          ByteBuffer frame = frames.read(in, maxRequest);
          if (!startServing()) {
            return; // closed meanwhile: the request is not served
          }
          requestStarted();
          LookupWire.Request request = LookupWire.decodeRequest(frame);
          if (request.op() == LookupWire.AUTH) {
            security.authenticate(request.token());
            authenticated = true;
            reply = LookupReplies.encodeOk(frames);
          } else if (!authenticated) {
            throw new LookupSecurity.Unauthorized(
                LookupSecurity.Unauthorized.NOT_AUTHENTICATED, "no_auth");
          } else {
            reply = answer(request, frames);
          }
        } catch (ProtocolException e) {
          // before its AUTH, a connection learns nothing more than that it must authenticate
          refusal =
              authenticated || e instanceof LookupSecurity.Unauthorized
                  ? e
                  : new LookupSecurity.Unauthorized(
                      LookupSecurity.Unauthorized.NOT_AUTHENTICATED, "no_auth");
          if (!inFlight) {
            if (!startServing()) {
              return;
            }
            requestStarted();
          }
          reply = LookupReplies.encodeError(frames, LookupWire.PROTOCOL, refusal.getMessage());
        }
        deadline = (after(settings.idleTimeout())); // the client must take the reply by then
        frames.send(reply, out);
        requestEnded();
        if (refusal != null) {
          if (refusal instanceof LookupSecurity.Unauthorized u) {
            log.info("lookup connection from {} refused: {}", peer, u.getMessage());
            lookup.metrics().portRejected(u.rejection);
          } else {
            lookup.metrics().portRejected("protocol");
          }
          return;
        }
        doneServing(after(settings.idleTimeout()));
      }
    } catch (SSLException e) {
      if (!isClosed()) {
        log.info("lookup connection from {}: TLS failed: {}", peer, e.getMessage());
        lookup.metrics().portRejected("tls");
      }
    } catch (EOFException | SocketException e) {
      // the client went away, the connection was past its deadline, or the endpoint is closing
    } catch (IOException e) {
      log.warn("lookup connection from {} failed: {}", peer, e.toString());
    } finally {
      if (inFlight) {
        requestEnded();
      }
      connections.remove(this);
      lookup.metrics().portClosed();
    }
  }

  /** Marks a request in flight (again), or false when the connection was closed meanwhile. */
  private boolean startServing() {
    if (!state.compareAndSet(WAITING, SERVING) && state.get() != SERVING) {
      return false;
    }
    deadline = NO_DEADLINE; // a lookup may wait for values to be computed
    return true;
  }

  /** Marks the request answered: the connection waits for the next until {@code next}. */
  private void doneServing(long next) {
    served = true;
    waitingSince = System.nanoTime();
    deadline = next;
    state.compareAndSet(SERVING, WAITING);
  }

  boolean isClosed() {
    return state.get() == CLOSED;
  }

  /** Closes the connection unless a request is in flight; false when one is. */
  boolean closeIfWaiting() {
    if (!state.compareAndSet(WAITING, CLOSED)) {
      return false;
    }
    closeSocket();
    return true;
  }

  /** Closes the connection, whatever its thread is doing. */
  void close() {
    if (state.getAndSet(CLOSED) != CLOSED) {
      closeSocket();
    }
  }

  private void closeSocket() {
    try {
      socket.close();
    } catch (IOException e) {
      log.debug("closing a lookup connection: {}", e.toString());
    }
  }

  private void requestStarted() {
    inFlight = true;
    lookup.metrics().portRequestStarted();
  }

  private void requestEnded() {
    inFlight = false;
    lookup.metrics().portRequestEnded();
  }

  private static long after(Duration d) {
    return System.nanoTime() + d.toNanos();
  }

  private ByteBuffer answer(LookupWire.Request request, LookupFrames frames) {
    String cacheId = request.cacheId();
    long started = System.nanoTime();
    try {
      if (request.op() == LookupWire.DESCRIBE) {
        return LookupReplies.encodeSpec(frames, lookup.spec(cacheId));
      }
      if (request.op() == LookupWire.INPUTS) {
        byte[] json = LookupInputs.json(cacheId, lookup.inputs(cacheId));
        return LookupInputs.encodeReply(frames, json);
      }
      if (request.session() != null) {
        return served(request, started, sessions.answer(request, frames));
      }
      long[] indices = request.indices();
      var spec = lookup.spec(cacheId);
      LookupWire.checkCarries(request.version(), cacheId, spec, indices.length);
      Object[] values = lookup.lookup(cacheId, indices);
      return served(
          request, started, LookupReplies.encodeValues(frames, request.version(), spec, values));
    } catch (IllegalArgumentException e) {
      failed(request, e);
      return LookupReplies.encodeError(frames, LookupWire.BAD_REQUEST, e.getMessage());
    } catch (LookupFailedException e) {
      failed(request, e);
      return LookupReplies.encodeError(frames, LookupWire.FAILED, e.getMessage());
    }
  }

  /**
   * Whether the node's metrics count {@code request} as a lookup: a GET, or a session's NEXT (its
   * step's values), timed from the decoded request to the encoded reply. Other requests (DESCRIBE,
   * INPUTS, a session's OPEN and RESUME) are no lookups.
   */
  private static boolean isLookup(LookupWire.Request request) {
    return request.session() == null
        ? request.op() == LookupWire.GET
        : request.op() == SessionWire.NEXT;
  }

  private ByteBuffer served(LookupWire.Request request, long startedNanos, ByteBuffer reply) {
    if (isLookup(request)) {
      lookup.metrics().lookupServed(NodeMetrics.LookupPath.PORT, startedNanos);
    }
    return reply;
  }

  private void failed(LookupWire.Request request, RuntimeException failure) {
    if (isLookup(request)) {
      lookup
          .metrics()
          .lookupFailed(NodeMetrics.LookupPath.PORT, NodeMetrics.FailureReason.of(failure));
    }
  }
}
