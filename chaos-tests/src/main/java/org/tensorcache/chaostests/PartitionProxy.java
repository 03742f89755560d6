package org.tensorcache.chaostests;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A forwarding TCP proxy in front of one member's Artery port: the member advertises the proxy's
 * port and binds another. While the {@link Network} holds a connection, the proxy neither reads nor
 * writes it in either direction and leaves it open, so the sender's buffers fill as when packets
 * are lost; a new connection from a cut-off origin is accepted and held the same way. A heal
 * forwards again from where it stopped, as a network does whose TCP connections outlive it:
 * Artery's own timeouts, not the proxy, decide whether a connection is given up.
 */
final class PartitionProxy implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PartitionProxy.class);

  private final ServerSocket server;
  private final int target;
  private final String member;
  private final Network network;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * Listens on 127.0.0.1:{@code port} and forwards to 127.0.0.1:{@code target}, the member whose
   * outgoing connections come from {@code member}.
   */
  PartitionProxy(int port, int target, String member, Network network) throws IOException {
    this.server = new ServerSocket();
    this.server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 256);
    this.target = target;
    this.member = member;
    this.network = network;
    Thread t = new Thread(this::accept, "proxy-" + port);
    t.setDaemon(true);
    t.start();
  }

  /** The loopback address the fronted member connects out from. */
  String member() {
    return member;
  }

  private void accept() {
    while (!closed) {
      try {
        Socket in = server.accept();
        String from = in.getInetAddress().getHostAddress();
        network.seen(from, member);
        Link link = new Link(in, from);
        links.add(link);
        Thread t = new Thread(link::open, "proxy-link-" + from + "-" + member);
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        if (!closed) {
          log.warn("proxy of {} stopped accepting: {}", member, e.toString());
        }
        return;
      }
    }
  }

  /** One connection through the proxy: from an origin to the member, and the member's replies. */
  final class Link {
    private final Socket in;
    private final Socket out = new Socket();
    private final String from;
    private volatile boolean done;

    Link(Socket in, String from) {
      this.in = in;
      this.from = from;
    }

    boolean closed() {
      return done || PartitionProxy.this.closed;
    }

    private void open() {
      try {
        in.setTcpNoDelay(true);
        out.setTcpNoDelay(true);
        out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 10_000);
        Thread back = new Thread(() -> pump(out, in), "proxy-back-" + from + "-" + member);
        back.setDaemon(true);
        back.start();
        pump(in, out);
      } catch (IOException e) {
        close();
      }
    }

    /** Copies bytes while the network lets this connection through; closes both ends at the end. */
    private void pump(Socket src, Socket dst) {
      byte[] buf = new byte[64 * 1024];
      try {
        InputStream is = src.getInputStream();
        OutputStream os = dst.getOutputStream();
        while (!closed()) {
          network.awaitOpen(from, member, this); // held: nothing read, so the sender backs up
          int n = is.read(buf);
          if (n < 0) {
            break;
          }
          network.awaitOpen(from, member, this); // read just before a cut: kept until the heal
          os.write(buf, 0, n);
        }
      } catch (IOException e) {
        // a peer went away: the link ends
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      close();
    }

    void close() {
      done = true;
      links.remove(this);
      closeQuietly(in);
      closeQuietly(out);
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (Link l : links) {
      l.close();
    }
  }
}
