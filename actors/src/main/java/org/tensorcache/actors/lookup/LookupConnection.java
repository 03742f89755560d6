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
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the lookup port, served on its own thread: the TLS handshake, the AUTH when the
 * port has a token, then request after request, each read whole, answered and flushed before the
 * next is read. Each step sets the connection's deadline in {@link PortConnections}, whose reaper
 * closes it when the client is late.
 */
final class LookupConnection implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(LookupConnection.class);

  /**
   * A refusal for want of credentials, which the metrics count under {@code rejection}; its message
   * starts with {@link LookupRefusedException#UNAUTHORIZED}, so that clients can tell it apart.
   */
  private static final class Unauthorized extends ProtocolException {
    private static final long serialVersionUID = 1L;
    private final String rejection;

    Unauthorized(String reason, String rejection) {
      super(LookupRefusedException.UNAUTHORIZED + reason);
      this.rejection = rejection;
    }
  }

  private static final String NOT_AUTHENTICATED =
      "this port needs an AUTH request (op 6, protocol version 3) with its token first";

  private final PortConnections.Conn c;
  private final LocalLookup lookup;
  private final SessionPort sessions;
  private final LookupEndpoint.Settings settings;
  private final LookupSecurity security;
  private final int maxRequest;
  private final PortConnections connections;

  /** Whether this connection's current request is counted in flight by the metrics. */
  private boolean inFlight;

  LookupConnection(
      PortConnections.Conn c,
      LocalLookup lookup,
      SessionPort sessions,
      LookupEndpoint.Settings settings,
      LookupSecurity security,
      int maxRequest,
      PortConnections connections) {
    this.c = c;
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
    Socket socket = c.socket;
    SocketAddress peer = socket.getRemoteSocketAddress();
    try (socket) {
      socket.setTcpNoDelay(true);
      Socket s = socket;
      if (security.tls().isPresent()) {
        SSLSocket tls = security.nodeSocket(socket);
        tls.startHandshake();
        s = tls;
      }
      boolean authenticated = security.token().isEmpty();
      if (authenticated) {
        c.deadline(after(settings.idleTimeout()));
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
          c.deadline(after(settings.readTimeout())); // the rest of the frame is due by then
        }
        ByteBuffer reply;
        ProtocolException refusal = null;
        try {
          ByteBuffer frame = frames.read(in, maxRequest);
          if (!c.startServing()) {
            return; // closed meanwhile: the request is not served
          }
          requestStarted();
          LookupWire.Request request = LookupWire.decodeRequest(frame);
          if (request.op() == LookupWire.AUTH) {
            authenticate(request.token());
            authenticated = true;
            reply = LookupWire.encodeOk(frames);
          } else if (!authenticated) {
            throw new Unauthorized(NOT_AUTHENTICATED, "no_auth");
          } else {
            reply = answer(request, frames);
          }
        } catch (ProtocolException e) {
          // before its AUTH, a connection learns nothing more than that it must authenticate
          refusal =
              authenticated || e instanceof Unauthorized
                  ? e
                  : new Unauthorized(NOT_AUTHENTICATED, "no_auth");
          if (!inFlight) {
            if (!c.startServing()) {
              return;
            }
            requestStarted();
          }
          reply = LookupWire.encodeError(frames, LookupWire.PROTOCOL, refusal.getMessage());
        }
        c.deadline(after(settings.idleTimeout())); // the client must take the reply by then
        frames.send(reply, out);
        requestEnded();
        if (refusal != null) {
          if (refusal instanceof Unauthorized u) {
            log.info("lookup connection from {} refused: {}", peer, u.getMessage());
            lookup.metrics().portRejected(u.rejection);
          } else {
            lookup.metrics().portRejected("protocol");
          }
          return;
        }
        c.doneServing(after(settings.idleTimeout()));
      }
    } catch (SSLException e) {
      if (!c.isClosed()) {
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
      connections.remove(c);
      lookup.metrics().portClosed();
    }
  }

  /** Checks an AUTH's token; a port without a token takes any, a wrong one is refused. */
  private void authenticate(String token) throws ProtocolException {
    if (security.token().isPresent() && !security.tokenMatches(token)) {
      throw new Unauthorized("wrong token", "token");
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
        return LookupWire.encodeSpec(frames, lookup.spec(cacheId));
      }
      if (request.op() == LookupWire.INPUTS) {
        byte[] json = LookupInputs.json(cacheId, lookup.inputs(cacheId));
        return LookupInputs.encodeReply(frames, json);
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
}
