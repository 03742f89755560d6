package org.tensorcache.actors.client;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.tensorcache.actors.lookup.LookupChecks;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupValues;
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Lookups for a process that is no cluster member (a trainer outside the cluster, a data loader),
 * through the nodes' binary lookup ports ({@code tensorcache.lookup.endpoint}, {@code ./tensorcache
 * node --lookup-port}). Thread-safe: each call borrows a connection of its own from a pool. A
 * lookup is idempotent, so one that loses its connection (a node preempted) is sent again to the
 * next endpoint; it fails only when every endpoint has failed it.
 */
public final class RemoteLookupClient implements AutoCloseable {
  private final List<InetSocketAddress> endpoints;
  private final Duration timeout;
  private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
  private final Map<String, CacheSpec> specs = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private volatile boolean closed;

  private RemoteLookupClient(List<InetSocketAddress> endpoints, Duration timeout) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("no lookup endpoint given, expected at least one");
    }
    this.endpoints = List.copyOf(endpoints);
    this.timeout = timeout;
  }

  /**
   * A client of {@code endpoints} (any node's lookup port); a reply not read within {@code timeout}
   * fails the connection. Take the timeout above the nodes' {@code tensorcache.lookup.timeout},
   * since a lookup of indices not computed yet waits for them.
   */
  public static RemoteLookupClient connect(List<InetSocketAddress> endpoints, Duration timeout) {
    return new RemoteLookupClient(endpoints, timeout);
  }

  /** The cache's spec as the nodes have it (asked once, then kept). */
  public CacheSpec spec(String cacheId) {
    CacheSpec spec = specs.get(cacheId);
    if (spec == null) {
      spec = call(cacheId, null, null, null);
      specs.put(cacheId, spec);
    }
    return spec;
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
    call(cacheId, spec, indices, out);
  }

  /** Closes every pooled connection; calls in flight finish on theirs. */
  @Override
  public void close() {
    closed = true;
    for (Connection c; (c = idle.poll()) != null; ) {
      c.close();
    }
  }

  /** A DESCRIBE when {@code indices} is null, else a GET into {@code out}. */
  private CacheSpec call(String cacheId, CacheSpec spec, long[] indices, Object[] out) {
    if (closed) {
      throw new IllegalStateException("the remote lookup client is closed");
    }
    byte[] id = LookupWire.utf8(cacheId);
    List<String> failures = new ArrayList<>();
    for (int attempt = 0; attempt < endpoints.size(); attempt++) {
      Connection c = idle.poll();
      try {
        if (c == null) {
          c = open();
        }
        CacheSpec result = indices == null ? c.describe(id) : c.get(id, spec, indices, out);
        idle.push(c);
        return result;
      } catch (IllegalArgumentException | LookupFailedException e) {
        idle.push(c); // an answered error: the connection is in step and stays usable
        throw e;
      } catch (IOException e) {
        failures.add((c == null ? "connect" : c.address) + ": " + e);
        if (c != null) {
          c.close();
        }
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
        return new Connection(address, timeout);
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

    Connection(InetSocketAddress address, Duration timeout) throws IOException {
      this.address = address;
      this.socket = new Socket();
      try {
        socket.connect(address, (int) Math.min(timeout.toMillis(), 10_000));
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        in = new BufferedInputStream(socket.getInputStream(), 64 << 10);
        out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
      } catch (IOException e) {
        socket.close();
        throw new IOException("cannot connect to lookup endpoint " + address, e);
      }
    }

    CacheSpec describe(byte[] id) throws IOException {
      frames.send(LookupWire.encodeDescribe(frames, id), out);
      return LookupWire.decodeSpec(LookupWire.decodeStatus(frames.read(in), address));
    }

    CacheSpec get(byte[] id, CacheSpec spec, long[] indices, Object[] values) throws IOException {
      frames.send(LookupWire.encodeGet(frames, LookupWire.VERSION_3, id, indices), out);
      ByteBuffer reply = LookupWire.decodeStatus(frames.read(in), address);
      LookupValues.decodeValues(reply, spec, indices.length, values);
      return spec;
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
