package org.tensorcache.bench.security;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.function.IntSupplier;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.remote.Load;

/**
 * The limit of a lookup port over a transport: a bare echo server on loopback, no cache behind it,
 * plain or with the port's own TLS settings ({@link LookupSecurity#nodeSocket}). Its clients send a
 * lookup's request and read a lookup's reply, of the sizes the port's would have (two float
 * fields), so that TLS echo / plain echo is what the JDK's TLS costs those bytes on this machine.
 */
final class SocketEcho implements AutoCloseable {
  /** A GET's frame, past its indices: length, version, op, the cache id (about 20 bytes). */
  private static final int REQUEST_HEADER = 32;

  /** A reply's frame, past its values: length, status, field count, each field's name and dtype. */
  private static final int REPLY_HEADER = 48;

  private final ServerSocket server;

  /** Starts an echo server; {@code security} as a node's port ({@link LookupSecurity#none()}). */
  SocketEcho(LookupSecurity security) throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    daemon(
        () -> {
          while (!server.isClosed()) {
            try {
              Socket s = server.accept();
              daemon(() -> serve(s, security));
            } catch (IOException e) {
              return; // closed
            }
          }
        });
  }

  private static void daemon(Runnable r) {
    Thread t = new Thread(r, "echo");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Answers each frame with one as long as the reply to its request: a request of B indices (8
   * bytes each) is answered with B examples' two floats.
   */
  private static void serve(Socket socket, LookupSecurity security) {
    try (socket) {
      socket.setTcpNoDelay(true);
      Socket s = security.tls().isPresent() ? security.nodeSocket(socket) : socket;
      var in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 << 10));
      var out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 64 << 10));
      byte[] buffer = new byte[0];
      while (true) {
        int length = in.readInt();
        int replyLength = length - REQUEST_HEADER + REPLY_HEADER;
        buffer = fit(buffer, replyLength);
        in.readFully(buffer, 0, length);
        out.writeInt(replyLength);
        out.write(buffer, 0, replyLength);
        out.flush();
      }
    } catch (IOException e) {
      // the client closed its connection
    }
  }

  private static byte[] fit(byte[] b, int length) {
    return b.length < length ? new byte[length] : b;
  }

  /** One thread's client: a connection, TLS with {@code client} when it has TLS material. */
  Load.Target client(LookupSecurity client) throws IOException {
    var address = (InetSocketAddress) server.getLocalSocketAddress();
    Socket tcp = new Socket();
    tcp.connect(address, 10_000);
    tcp.setTcpNoDelay(true);
    Socket s = client.tls().isPresent() ? client.clientSocket(tcp, address.getHostString()) : tcp;
    if (s instanceof SSLSocket tls) {
      tls.startHandshake();
    }
    var in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 << 10));
    var out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 64 << 10));
    return new Load.Target() {
      private byte[] buffer = new byte[0];

      @Override
      public IntSupplier fetch(long[] indices) throws IOException {
        int length = REQUEST_HEADER + 8 * indices.length;
        int replyLength = REPLY_HEADER + 4 * 2 * indices.length;
        buffer = fit(buffer, Math.max(length, replyLength));
        out.writeInt(length);
        out.write(buffer, 0, length);
        out.flush();
        int got = in.readInt();
        if (got != replyLength) {
          throw new IOException("echo replied " + got + " bytes, expected " + replyLength);
        }
        in.readFully(buffer, 0, got);
        return () -> 0; // nothing to check: the echo holds no values
      }

      @Override
      public void close() throws IOException {
        s.close();
      }
    };
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
