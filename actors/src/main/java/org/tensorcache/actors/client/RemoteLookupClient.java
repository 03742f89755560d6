package org.tensorcache.actors.client;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.lookup.LookupChecks;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupInputs;
import org.tensorcache.actors.lookup.LookupRefusedException;
import org.tensorcache.actors.lookup.LookupReplies;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Lookups for a process that is no cluster member (a trainer outside the cluster, a data loader),
 * through the nodes' binary lookup ports ({@code tensorcache.lookup.endpoint}, {@code ./tensorcache
 * node --lookup-port}). Thread-safe: each call borrows a connection of its own from a pool. A
 * lookup is idempotent, so one that loses its connection (a node preempted) is sent again to the
 * next endpoint; it fails only when every endpoint has failed it. A pooled connection the node has
 * closed meanwhile (idle too long, or its place taken at the node's cap) costs no attempt: the call
 * goes again on a new one. With {@link LookupSecurity} it speaks TLS 1.3 and presents a client
 * certificate, and presents the port's token before its first request.
 */
public final class RemoteLookupClient implements AutoCloseable {
  private final List<InetSocketAddress> endpoints;
  private final Duration timeout;
  private final LookupSecurity security;
  private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
  private final Map<String, CacheSpec> specs = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private volatile boolean closed;

  private RemoteLookupClient(
      List<InetSocketAddress> endpoints, Duration timeout, LookupSecurity security) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("no lookup endpoint given, expected at least one");
    }
    this.endpoints = List.copyOf(endpoints);
    this.timeout = timeout;
    this.security = security;
  }

  /**
   * A client of {@code endpoints} (any node's lookup port); a reply not read within {@code timeout}
   * fails the connection. Take the timeout above the nodes' {@code tensorcache.lookup.timeout},
   * since a lookup of indices not computed yet waits for them.
   */
  public static RemoteLookupClient connect(List<InetSocketAddress> endpoints, Duration timeout) {
    return connect(endpoints, timeout, LookupSecurity.none());
  }

  /**
   * Like {@link #connect(List, Duration)}, with credentials for ports that need them: with TLS
   * material every connection speaks TLS 1.3, checks that the node's certificate is signed by the
   * given CA and names the endpoint's host, and presents this client's certificate; with a token it
   * starts with an AUTH. A node that refuses them fails the attempt like a node that is down.
   */
  public static RemoteLookupClient connect(
      List<InetSocketAddress> endpoints, Duration timeout, LookupSecurity security) {
    return new RemoteLookupClient(endpoints, timeout, security);
  }

  /** The cache's spec as the nodes have it (asked once, then kept). */
  public CacheSpec spec(String cacheId) {
    CacheSpec spec = specs.get(cacheId);
    if (spec == null) {
      byte[] id = LookupWire.utf8(cacheId);
      spec = call(cacheId, c -> c.describe(id));
      specs.put(cacheId, spec);
    }
    return spec;
  }

  /**
   * The inputs the cache was filled from, as the nodes recorded them (data set, model and tokenizer
   * digests, truncation; empty when none were recorded), in sorted key order; asked each time. A
   * node older than protocol version 4 fails the attempt with an error that says so.
   */
  public Map<String, String> inputs(String cacheId) {
    byte[] id = LookupWire.utf8(cacheId);
    return call(cacheId, c -> c.inputs(id));
  }

  /** The values of {@code indices}, blocking until every one is there or the lookup fails. */
  public Batch lookup(String cacheId, long[] indices) {
    CacheSpec spec = spec(cacheId);
    if (indices == null) {
      throw new IllegalArgumentException("no indices for cache '" + cacheId + "'");
    }
    Object[] values = LookupChecks.newValues(spec, indices.length);
    lookupInto(cacheId, indices, values);
    return new Batch(spec, indices, values);
  }

  /**
   * Like {@link #lookup}, into the caller's arrays ({@code out[f]} needs {@code indices.length *
   * width} elements of the field's dtype per field, as from {@link Batch#newValues}). Bad input is
   * an {@link IllegalArgumentException} naming it; a lookup the cluster could not serve is a {@link
   * LookupFailedException}. On failure {@code out} may hold part of the values.
   */
  public void lookupInto(String cacheId, long[] indices, Object[] out) {
    if (indices == null) {
      throw new IllegalArgumentException("no indices for cache '" + cacheId + "'");
    }
    CacheSpec spec = spec(cacheId);
    LookupChecks.checkBuffers(cacheId, spec, indices.length, out);
    byte[] id = LookupWire.utf8(cacheId);
    call(cacheId, c -> c.get(id, spec, indices, out));
  }

  /** Closes every pooled connection; calls in flight finish on theirs. */
  @Override
  public void close() {
    closed = true;
    for (Connection c; (c = idle.poll()) != null; ) {
      c.close();
    }
  }

  /** One request and its reply on a connection. */
  private interface Exchange<T> {
    T on(Connection c) throws IOException;
  }

  /** Runs {@code exchange}, on the next endpoint when a node does not answer (it is idempotent). */
  private <T> T call(String cacheId, Exchange<T> exchange) {
    if (closed) {
      throw new IllegalStateException("the remote lookup client is closed");
    }
    List<String> failures = new ArrayList<>();
    for (int attempt = 0; attempt < endpoints.size(); ) {
      Connection c = idle.poll();
      boolean pooled = c != null;
      try {
        if (c == null) {
          c = open();
        }
        T result = exchange.on(c);
        idle.push(c);
        return result;
      } catch (IllegalArgumentException | LookupFailedException e) {
        idle.push(c); // an answered error: the connection is in step and stays usable
        throw e;
      } catch (IOException e) {
        if (c != null) {
          c.close();
        }
        if (pooled) {
          continue; // the node closed it while it was idle: no attempt spent
        }
        failures.add((c == null ? "connect" : c.address) + ": " + e);
        attempt++;
      }
    }
    throw new LookupFailedException(
        "lookup of cache '" + cacheId + "' failed on every endpoint: " + failures, null);
  }

  private Connection open() throws IOException {
    IOException last = null;
    for (int i = 0; i < endpoints.size(); i++) {
      InetSocketAddress address =
          endpoints.get(Math.floorMod(next.getAndIncrement(), endpoints.size()));
      try {
        return new Connection(address, timeout, security);
      } catch (IOException e) {
        last = e;
      }
    }
    throw last;
  }

  /** One TCP connection, used by one thread at a time. */
  private static final class Connection {
    final InetSocketAddress address;
    final Socket socket;
    final InputStream in;
    final OutputStream out;
    final LookupFrames frames = new LookupFrames();

    Connection(InetSocketAddress address, Duration timeout, LookupSecurity security)
        throws IOException {
      this.address = address;
      Socket tcp = new Socket();
      Socket s = tcp;
      try {
        tcp.connect(address, (int) Math.min(timeout.toMillis(), 10_000));
        tcp.setTcpNoDelay(true);
        tcp.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        if (security.tls().isPresent()) {
          SSLSocket tls = security.clientSocket(tcp, address.getHostString());
          s = tls;
          tls.startHandshake();
        }
        in = new BufferedInputStream(s.getInputStream(), 64 << 10);
        out = new BufferedOutputStream(s.getOutputStream(), 64 << 10);
      } catch (IOException e) {
        s.close();
        tcp.close();
        throw new IOException("cannot connect to lookup endpoint " + address + ": " + e, e);
      }
      this.socket = s;
      if (security.token().isPresent()) {
        try {
          frames.send(LookupWire.encodeAuth(frames, security.token().get()), out);
          LookupReplies.decodeStatus(frames.read(in), address);
        } catch (IOException | RuntimeException e) {
          close();
          throw e instanceof IOException io
              ? io
              : new IOException(address + " refused the token: " + e.getMessage(), e);
        }
      }
    }

    CacheSpec describe(byte[] id) throws IOException {
      frames.send(LookupWire.encodeDescribe(frames, id), out);
      return LookupReplies.decodeSpec(LookupReplies.decodeStatus(frames.read(in), address));
    }

    CacheSpec get(byte[] id, CacheSpec spec, long[] indices, Object[] values) throws IOException {
      frames.send(LookupWire.encodeGet(frames, LookupWire.VERSION_3, id, indices), out);
      ByteBuffer reply = LookupReplies.decodeStatus(frames.read(in), address);
      LookupReplies.decodeValues(reply, spec, indices.length, values);
      return spec;
    }

    Map<String, String> inputs(byte[] id) throws IOException {
      frames.send(LookupInputs.encodeRequest(frames, id), out);
      ByteBuffer reply;
      try {
        reply = LookupReplies.decodeStatus(frames.read(in), address);
      } catch (LookupRefusedException e) {
        // a node of versions 1 to 3 refuses the version byte of INPUTS, the one request of
        // version 4, and closes the connection
        if (e.kind() == LookupRefusedException.Kind.UNSUPPORTED_VERSION) {
          ProtocolException old =
              new ProtocolException(
                  "node "
                      + address
                      + " does not serve recorded inputs (protocol version 4); upgrade the node");
          old.initCause(e);
          throw old;
        }
        throw e;
      }
      return LookupInputs.decodeReply(reply);
    }

    void close() {
      try {
        socket.close();
      } catch (IOException e) {
        // nothing to do: the connection is dropped either way
      }
    }
  }
}
