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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.replica.ReplicaView;
import org.tensorcache.model.spec.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * A node's binary lookup port for processes that are no cluster members (see {@link LookupWire}): a
 * lookup the replica holds is gathered and answered on the connection's own thread, with no actor
 * message or Artery hop in between; indices not computed yet go to the node's {@link LookupActor},
 * so a reply is complete or an error, never a sentinel. One thread per connection, up to a bound.
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
  private final ActorSystem<?> system;
  private final ActorRef<LookupActor.Command> lookup;
  private final ReplicaView view;
  private final NodeSettings settings;
  private final int maxConnections;
  private final int maxRequest;
  private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private LookupEndpoint(
      ServerSocket server,
      ActorSystem<?> system,
      ActorRef<LookupActor.Command> lookup,
      int maxConnections) {
    this.server = server;
    this.system = system;
    this.lookup = lookup;
    TensorCacheNode node = TensorCacheNode.get(system);
    this.view = node.view();
    this.settings = node.settings();
    this.maxConnections = maxConnections;
    // version, op, the longest cache id, the count and the largest batch's indices
    this.maxRequest = (int) Math.min(LookupWire.MAX_FRAME, 8 + 0xffffL + 8L * settings.maxBatch());
  }

  /** Binds the port of {@code endpoint} and serves it; missing indices go to {@code lookup}. */
  public static LookupEndpoint start(
      ActorSystem<?> system, ActorRef<LookupActor.Command> lookup, Settings endpoint)
      throws IOException {
    ServerSocket server = new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getByName(endpoint.host()), endpoint.port()));
    } catch (IOException e) {
      server.close();
      throw new IOException(
          "cannot bind the lookup endpoint to " + endpoint.host() + ":" + endpoint.port(), e);
    }
    LookupEndpoint ep = new LookupEndpoint(server, system, lookup, endpoint.maxConnections());
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
        refuse(socket);
        continue;
      }
      connections.add(socket);
      Thread t = new Thread(() -> serve(socket), "tensorcache-lookup-" + socket.getPort());
      t.setDaemon(true);
      t.start();
    }
  }

  private void refuse(Socket socket) {
    try (socket) {
      LookupWire.Frames frames = new LookupWire.Frames();
      String message =
          "lookup endpoint " + address() + " already serves " + maxConnections + " connections";
      frames.send(LookupWire.error(frames, LookupWire.FAILED, message), socket.getOutputStream());
    } catch (IOException e) {
      log.debug("refusing a connection: {}", e.toString());
    }
  }

  private void serve(Socket socket) {
    LookupWire.Frames frames = new LookupWire.Frames();
    try (socket) {
      socket.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(socket.getInputStream(), 64 << 10);
      OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
      while (!closed) {
        ByteBuffer request;
        try {
          request = frames.read(in, maxRequest);
        } catch (ProtocolException e) {
          frames.send(LookupWire.error(frames, LookupWire.PROTOCOL, e.getMessage()), out);
          return;
        }
        try {
          frames.send(answer(request, frames), out);
        } catch (ProtocolException | java.nio.BufferUnderflowException e) {
          String message = e instanceof ProtocolException ? e.getMessage() : "truncated request";
          frames.send(LookupWire.error(frames, LookupWire.PROTOCOL, message), out);
          return;
        }
      }
    } catch (EOFException | SocketException e) {
      // the client went away, or the endpoint is closing
    } catch (IOException e) {
      log.warn("lookup connection from {} failed: {}", socket.getRemoteSocketAddress(), e);
    } finally {
      connections.remove(socket);
    }
  }

  private ByteBuffer answer(ByteBuffer request, LookupWire.Frames frames) throws ProtocolException {
    byte version = request.get();
    if (version != LookupWire.VERSION) {
      throw new ProtocolException(
          "protocol version " + version + ", expected " + LookupWire.VERSION);
    }
    byte op = request.get();
    String cacheId = LookupWire.getStr(request);
    try {
      if (op == LookupWire.DESCRIBE) {
        return describe(view.spec(cacheId), frames);
      }
      if (op != LookupWire.GET) {
        throw new ProtocolException(
            "op " + op + ", expected " + LookupWire.GET + " or " + LookupWire.DESCRIBE);
      }
      int count = request.getInt();
      if (count < 0 || (long) count * Long.BYTES != request.remaining()) {
        throw new ProtocolException(
            count + " indices announced, " + request.remaining() + " bytes of them sent");
      }
      long[] indices = new long[count];
      request.asLongBuffer().get(indices);
      return values(get(cacheId, indices), frames);
    } catch (IllegalArgumentException e) {
      return LookupWire.error(frames, LookupWire.BAD_REQUEST, e.getMessage());
    } catch (FailedLookup e) {
      return LookupWire.error(frames, LookupWire.FAILED, e.getMessage());
    }
  }

  private float[][] get(String cacheId, long[] indices) throws FailedLookup {
    CacheSpec spec = view.spec(cacheId);
    BatchRequest.checkSize(cacheId, indices, settings);
    long replyBytes =
        3 + (long) indices.length * BatchRequest.rowBytes(spec) + 4L * spec.fields().size();
    if (replyBytes > LookupWire.MAX_FRAME) {
      throw new IllegalArgumentException(
          String.format(
              "reply of %d bytes for %d indices of cache '%s' is over the maximum frame of %d"
                  + " bytes, expected at most %d indices",
              replyBytes,
              indices.length,
              cacheId,
              LookupWire.MAX_FRAME,
              (LookupWire.MAX_FRAME - 64) / BatchRequest.rowBytes(spec)));
    }
    float[][] values = new float[spec.fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[indices.length * spec.fields().get(f).width()];
    }
    if (view.gather(cacheId, indices, values).length == 0) {
      return values;
    }
    return computed(cacheId, indices);
  }

  /** Asks the node's lookup actor, which computes what is missing (bounded by its timeout). */
  private float[][] computed(String cacheId, long[] indices) throws FailedLookup {
    long waitMs = settings.lookupTimeout().toMillis() + 2_000;
    try {
      return AskPattern.<LookupActor.Command, LookupActor.Batch>askWithStatus(
              lookup,
              replyTo -> new LookupActor.GetBatch(cacheId, indices, replyTo),
              java.time.Duration.ofMillis(waitMs),
              system.scheduler())
          .toCompletableFuture()
          .get(waitMs + 1_000, TimeUnit.MILLISECONDS)
          .values();
    } catch (ExecutionException e) {
      throw new FailedLookup(e.getCause().getMessage());
    } catch (TimeoutException e) {
      throw new FailedLookup(
          String.format(
              "lookup of %d indices of cache '%s' not answered within %d ms",
              indices.length, cacheId, waitMs));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FailedLookup("interrupted while the lookup was computed");
    }
  }

  private static ByteBuffer values(float[][] values, LookupWire.Frames frames) {
    int body = 1 + 2;
    for (float[] v : values) {
      body += 4 + v.length * Float.BYTES;
    }
    ByteBuffer b = frames.start(body).put(LookupWire.OK).putShort((short) values.length);
    for (float[] v : values) {
      b.putInt(v.length);
      b.asFloatBuffer().put(v);
      b.position(b.position() + v.length * Float.BYTES);
    }
    return b;
  }

  private static ByteBuffer describe(CacheSpec spec, LookupWire.Frames frames) {
    byte[] name = LookupWire.utf8(spec.name());
    int body = 1 + 2 + name.length + 8 + 4 + 2;
    for (FieldSpec f : spec.fields()) {
      body += 2 + LookupWire.utf8(f.name()).length + 2 + f.dtype().safetensorsName().length();
      body += 1 + 4 * f.shape().length;
    }
    ByteBuffer b = frames.start(body).put(LookupWire.OK);
    LookupWire.putStr(b, name);
    b.putLong(spec.n()).putInt(spec.rangeSize()).putShort((short) spec.fields().size());
    for (FieldSpec f : spec.fields()) {
      LookupWire.putStr(b, LookupWire.utf8(f.name()));
      LookupWire.putStr(b, LookupWire.utf8(f.dtype().safetensorsName()));
      b.put((byte) f.shape().length);
      for (int dim : f.shape()) {
        b.putInt(dim);
      }
    }
    return b;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      log.debug("closing a lookup connection: {}", e.toString());
    }
  }

  /** A lookup the cluster could not serve: a compute failure or the timeout. */
  private static final class FailedLookup extends Exception {
    FailedLookup(String message) {
      super(message, null, false, false);
    }
  }
}
