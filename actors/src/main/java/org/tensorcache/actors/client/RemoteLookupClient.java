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
import org.tensorcache.actors.lookup.LookupWire;
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.spec.FieldSpec;
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
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[indices.length * spec.fields().get(f).width()];
    }
    lookupInto(cacheId, indices, values);
    return new Batch(spec, indices, values);
  }

  /**
   * Like {@link #lookup}, into the caller's arrays ({@code out[f]} needs {@code indices.length *
   * width} floats per field). Bad input is an {@link IllegalArgumentException} naming it; a lookup
   * the cluster could not serve is a {@link LookupFailedException}. On failure {@code out} may hold
   * part of the values.
   */
  public void lookupInto(String cacheId, long[] indices, float[][] out) {
    if (indices == null) {
      throw new IllegalArgumentException("no indices for cache '" + cacheId + "'");
    }
    CacheSpec spec = spec(cacheId);
    TensorCacheClient.checkBuffers(cacheId, spec, indices.length, out);
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
  private CacheSpec call(String cacheId, CacheSpec spec, long[] indices, float[][] out) {
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
    final LookupWire.Frames frames = new LookupWire.Frames();

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
      ByteBuffer b = frames.start(2 + 2 + id.length).put(LookupWire.VERSION);
      b.put(LookupWire.DESCRIBE);
      LookupWire.putStr(b, id);
      frames.send(b, out);
      ByteBuffer reply = okReply();
      String name = LookupWire.getStr(reply);
      long n = reply.getLong();
      int rangeSize = reply.getInt();
      int count = reply.getShort() & 0xffff;
      List<FieldSpec> fields = new ArrayList<>(count);
      for (int f = 0; f < count; f++) {
        String field = LookupWire.getStr(reply);
        DType dtype = DType.fromSafetensors(LookupWire.getStr(reply));
        int[] shape = new int[reply.get()];
        for (int d = 0; d < shape.length; d++) {
          shape[d] = reply.getInt();
        }
        fields.add(new FieldSpec(field, dtype, shape));
      }
      return new CacheSpec(name, n, fields, rangeSize);
    }

    CacheSpec get(byte[] id, CacheSpec spec, long[] indices, float[][] out) throws IOException {
      ByteBuffer b =
          frames.start(2 + 2 + id.length + 4 + indices.length * Long.BYTES).put(LookupWire.VERSION);
      b.put(LookupWire.GET);
      LookupWire.putStr(b, id);
      b.putInt(indices.length);
      b.asLongBuffer().put(indices);
      b.position(b.limit());
      frames.send(b, this.out);
      ByteBuffer reply = okReply();
      int fields = reply.getShort() & 0xffff;
      if (fields != out.length) {
        throw new java.net.ProtocolException(
            fields + " fields in the reply, expected " + out.length);
      }
      for (int f = 0; f < fields; f++) {
        int floats = reply.getInt();
        int expected = indices.length * spec.fields().get(f).width();
        if (floats != expected) {
          throw new java.net.ProtocolException(
              floats + " values of field " + f + " in the reply, expected " + expected);
        }
        reply.asFloatBuffer().get(out[f], 0, floats);
        reply.position(reply.position() + floats * Float.BYTES);
      }
      return spec;
    }

    /** The reply's body after an OK status, or the error it carries. */
    private ByteBuffer okReply() throws IOException {
      ByteBuffer reply = frames.read(in);
      byte status = reply.get();
      if (status == LookupWire.OK) {
        return reply;
      }
      String message = LookupWire.getStr(reply);
      if (status == LookupWire.BAD_REQUEST) {
        throw new IllegalArgumentException(message);
      }
      if (status == LookupWire.FAILED) {
        throw new LookupFailedException(message, null);
      }
      throw new java.net.ProtocolException(address + " rejected a request: " + message);
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
