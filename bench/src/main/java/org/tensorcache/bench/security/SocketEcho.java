package org.tensorcache.bench.security;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ssl.SSLSocket;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.remote.Load;

/**
 * The limit of what a lookup port can do over a transport: a bare echo server on loopback that
 * answers every request frame with a reply frame of the size asked for, no cache behind it, over
 * plain TCP or over TLS with the port's own settings ({@link LookupSecurity#nodeSocket}: TLS 1.3, a
 * client certificate required). Its clients send a lookup's request and take a lookup's reply, of
 * the sizes the port's would have, so that TLS echo / plain echo is what the JDK's TLS costs those
 * bytes on this machine, beside what it costs the port.
 */
final class SocketEcho implements AutoCloseable {
  /** A GET's frame, past its indices: length, version, op, the cache id (about 20 bytes). */
  private static final int REQUEST_HEADER = 32;

  /** A reply's frame, past its values: length, status, field count, each field's name and dtype. */
  private static final int REPLY_HEADER = 48;

  private final ServerSocket server;
  private final LookupSecurity security;

  private SocketEcho(ServerSocket server, LookupSecurity security) {
    this.server = server;
    this.security = security;
  }

  /** Starts an echo server; {@code security} as a node's port ({@link LookupSecurity#none()}). */
  static SocketEcho start(LookupSecurity security) throws IOException {
    ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    SocketEcho echo = new SocketEcho(server, security);
    Thread accept = new Thread(echo::accept, "echo-accept");
    accept.setDaemon(true);
    accept.start();
    return echo;
  }

  InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t = new Thread(() -> serve(s), "echo-" + s.getPort());
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  /** Reads a frame whose first four bytes after the length ask for the reply's size; replies. */
  private void serve(Socket socket) {
    try (socket) {
      socket.setTcpNoDelay(true);
      Socket s = security.tls().isPresent() ? security.nodeSocket(socket) : socket;
      var in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 << 10));
      OutputStream out = new BufferedOutputStream(s.getOutputStream(), 64 << 10);
      byte[] request = new byte[0];
      byte[] reply = new byte[0];
      while (true) {
        int length = in.readInt();
        if (request.length < length) {
          request = new byte[length];
        }
        in.readFully(request, 0, length);
        int replyLength =
            ((request[0] & 0xff) << 24)
                | ((request[1] & 0xff) << 16)
                | ((request[2] & 0xff) << 8)
                | (request[3] & 0xff);
        if (reply.length < replyLength + 4) {
          reply = new byte[replyLength + 4];
        }
        reply[0] = request[0];
        reply[1] = request[1];
        reply[2] = request[2];
        reply[3] = request[3];
        out.write(reply, 0, replyLength + 4);
        out.flush();
      }
    } catch (IOException e) {
      // the client closed its connection
    }
  }

  /** One thread's client: a connection, TLS with {@code client} when it has TLS material. */
  Load.Target<byte[]> client(LookupSecurity client, int fields) throws IOException {
    Socket tcp = new Socket();
    tcp.connect(address(), 10_000);
    tcp.setTcpNoDelay(true);
    Socket s = tcp;
    if (client.tls().isPresent()) {
      SSLSocket tls = client.clientSocket(tcp, address().getHostString());
      tls.startHandshake();
      s = tls;
    }
    return new Client(s, fields);
  }

  @Override
  public void close() throws IOException {
    server.close();
  }

  /** Sends a request of a GET's size for the batch and reads a reply of a reply's size. */
  private static final class Client implements Load.Target<byte[]> {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final int fields;
    private byte[] request = new byte[0];
    private byte[] reply = new byte[0];

    Client(Socket socket, int fields) throws IOException {
      this.socket = socket;
      this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 << 10));
      this.out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
      this.fields = fields;
    }

    @Override
    public byte[] fetch(long[] indices) throws IOException {
      int length = REQUEST_HEADER + 8 * indices.length;
      int replyLength = REPLY_HEADER + 4 * fields * indices.length;
      if (request.length < length + 4) {
        request = new byte[length + 4];
      }
      putInt(request, 0, length);
      putInt(request, 4, replyLength);
      out.write(request, 0, length + 4);
      out.flush();
      int got = in.readInt();
      if (got != replyLength) {
        throw new IOException("echo replied " + got + " bytes, expected " + replyLength);
      }
      if (reply.length < got) {
        reply = new byte[got];
      }
      in.readFully(reply, 0, got);
      return reply;
    }

    @Override
    public int check(long[] indices, byte[] reply) {
      return 0; // nothing to check: the echo holds no values
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }

    private static void putInt(byte[] b, int at, int v) {
      b[at] = (byte) (v >>> 24);
      b[at + 1] = (byte) (v >>> 16);
      b[at + 2] = (byte) (v >>> 8);
      b[at + 3] = (byte) v;
    }
  }
}
