package org.tensorcache.lease;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on a free loopback port to a server: what a node's network path to the database
 * is, so that a test can cut it ({@link #cut()}: open connections reset, new ones refused).
 */
final class TcpGate implements AutoCloseable {
  private final ServerSocket server;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean open = true;

  TcpGate(InetSocketAddress target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "tcp-gate-" + server.getLocalPort());
    accept.setDaemon(true);
    accept.start();
  }

  /** The port to connect to instead of the server's. */
  int port() {
    return server.getLocalPort();
  }

  /** Resets every connection and refuses new ones from now on. */
  void cut() throws IOException {
    open = false;
    server.close();
    for (Socket s : sockets) {
      s.close();
    }
  }

  @Override
  public void close() throws IOException {
    cut();
  }

  private void accept() {
    while (open) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        sockets.add(client);
        sockets.add(upstream);
        pipe(client, upstream);
        pipe(upstream, client);
      } catch (IOException e) {
        return; // cut
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[8192];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // one side closed: close the other below
              } finally {
                try {
                  from.close();
                  to.close();
                } catch (IOException e) {
                  // already closed
                }
              }
            },
            "tcp-gate-pipe");
    t.setDaemon(true);
    t.start();
  }
}
