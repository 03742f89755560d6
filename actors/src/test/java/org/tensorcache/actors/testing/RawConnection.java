package org.tensorcache.actors.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.lookup.LookupFrames;
import org.tensorcache.actors.lookup.LookupSecurity;

/**
 * One connection to a lookup port that a test drives frame by frame, as a client in another
 * language (or a bad one) would: plain TCP or TLS, with no AUTH unless the test sends one.
 */
public final class RawConnection implements AutoCloseable {
  /** A reply: its status and the rest of its body. */
  public record Reply(byte status, ByteBuffer body) {
    /** The message of an error reply. */
    public String message() {
      ByteBuffer b = body.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      byte[] text = new byte[b.getShort() & 0xffff];
      b.get(text);
      return new String(text, StandardCharsets.UTF_8);
    }
  }

  public final Socket socket;
  public final LookupFrames frames = new LookupFrames();
  private final InputStream in;
  private final OutputStream out;

  private RawConnection(Socket socket) throws IOException {
    this.socket = socket;
    socket.setSoTimeout(30_000);
    this.in = new BufferedInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  /** A plain TCP connection. */
  public static RawConnection plain(InetSocketAddress endpoint) throws IOException {
    return new RawConnection(new Socket(endpoint.getAddress(), endpoint.getPort()));
  }

  /** A TLS connection with {@code security}'s material, its handshake done (on this side). */
  public static RawConnection tls(InetSocketAddress endpoint, LookupSecurity security)
      throws IOException {
    Socket tcp = new Socket(endpoint.getAddress(), endpoint.getPort());
    tcp.setSoTimeout(30_000);
    SSLSocket s = security.clientSocket(tcp, endpoint.getHostString());
    s.startHandshake();
    return new RawConnection(s);
  }

  /** Sends the frame built in {@code frames}. */
  public RawConnection send(ByteBuffer frame) throws IOException {
    frames.send(frame, out);
    return this;
  }

  /** Sends raw bytes. */
  public RawConnection sendBytes(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
    return this;
  }

  /** Reads one reply frame. */
  public Reply reply() throws IOException {
    ByteBuffer frame = frames.read(in);
    byte status = frame.get();
    return new Reply(status, frame.slice().order(ByteOrder.LITTLE_ENDIAN));
  }

  /** Whether the node has closed the connection: end of stream or a reset within {@code wait}. */
  public boolean closedWithin(Duration wait) throws IOException {
    socket.setSoTimeout((int) Math.max(1, wait.toMillis()));
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    } finally {
      if (!socket.isClosed()) {
        socket.setSoTimeout(30_000);
      }
    }
  }

  /** The time until the node closes the connection, reading and dropping whatever comes first. */
  public Duration timeToClose(Duration atMost) throws IOException {
    long start = System.nanoTime();
    socket.setSoTimeout((int) atMost.toMillis());
    try {
      while (in.read() >= 0) {
        // drop it
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the node kept the connection open for " + atMost);
    } catch (IOException e) {
      // a reset: closed as well
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
