package org.tensorcache.actors.lookup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open connections of a lookup port, so that no client can hold a place it does not use. Each
 * connection has a deadline: for its TLS handshake and AUTH, for the rest of a frame once its first
 * byte came, for the next request, for the client to take a reply. A reaper closes a connection
 * past its deadline. At the cap, a new connection takes the place of one with no request in flight:
 * one that never completed a request if there is one (a client that connected and sent nothing),
 * else the one that has waited longest for its next request. Only when every connection has a
 * request in flight is the new one refused.
 */
final class PortConnections implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PortConnections.class);

  private final int max;
  private final Set<LookupConnection> open = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService reaper;

  /**
   * A registry of at most {@code max} connections whose deadlines are checked every {@code tick}.
   */
  PortConnections(int max, Duration tick) {
    this.max = max;
    this.reaper =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "tensorcache-lookup-reaper");
              t.setDaemon(true);
              return t;
            });
    long period = tick.toNanos();
    reaper.scheduleAtFixedRate(this::reap, period, period, TimeUnit.NANOSECONDS);
  }

  /**
   * Registers {@code c}; at the cap it first closes one connection with no request in flight (see
   * the class comment). False when every connection has a request in flight: {@code c} is refused.
   */
  synchronized boolean admit(LookupConnection c) {
    open.removeIf(LookupConnection::isClosed);
    if (open.size() >= max) {
      List<LookupConnection> candidates = new ArrayList<>(open);
      candidates.sort(
          Comparator.comparing((LookupConnection o) -> o.served)
              .thenComparingLong(o -> o.waitingSince));
      LookupConnection closed = null;
      for (LookupConnection o : candidates) {
        if (o.closeIfWaiting()) {
          closed = o;
          break;
        }
      }
      if (closed == null) {
        return false;
      }
      open.remove(closed);
      log.debug(
          "lookup connection from {} closed at the cap of {} to admit {}",
          closed.socket.getRemoteSocketAddress(),
          max,
          c.socket.getRemoteSocketAddress());
    }
    open.add(c);
    return true;
  }

  /** Forgets {@code c}, closed by its thread. */
  void remove(LookupConnection c) {
    c.close();
    open.remove(c);
  }

  /** How many connections are open. */
  int size() {
    return open.size();
  }

  private void reap() {
    long now = System.nanoTime();
    for (LookupConnection c : open) {
      long deadline = c.deadline;
      if (deadline != LookupConnection.NO_DEADLINE && now - deadline > 0 && !c.isClosed()) {
        log.debug(
            "lookup connection from {} closed: past its deadline",
            c.socket.getRemoteSocketAddress());
        remove(c);
      }
    }
  }

  /** Stops the reaper and closes every connection. */
  @Override
  public void close() {
    reaper.shutdownNow();
    for (LookupConnection c : open) {
      remove(c);
    }
  }
}
