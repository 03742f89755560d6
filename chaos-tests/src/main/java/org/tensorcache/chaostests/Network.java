package org.tensorcache.chaostests;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The loopback network of a chaos run as its {@link PartitionProxy}s see it: every member sends
 * from an address of its own (127.1.x.y), so a connection's source names its origin, and a cut says
 * which origin may not reach which member. Sources that are no member's (127.0.0.1) are never cut.
 */
final class Network {
  /** Which connections between the isolated members and the rest carry no bytes. */
  enum Cut {
    /** Every connection carries bytes. */
    NONE,
    /** Neither side reaches the other: a clean partition. */
    SYMMETRIC,
    /** The isolated members receive but cannot send: their own connections are held. */
    NO_SEND,
    /** The isolated members send but cannot receive: connections to them are held. */
    NO_RECEIVE
  }

  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private Cut cut = Cut.NONE;
  private Set<String> isolated = Set.of();
  private int hosts;

  /** A loopback address no member of this run sent from before. */
  synchronized String nextHost() {
    int n = ++hosts;
    if (n >= 250 * 250) {
      throw new IllegalStateException("no loopback address left after " + n + " members");
    }
    return "127.1." + (n / 250) + "." + (n % 250 + 1);
  }

  /**
   * The JVM options that put a member behind a proxy: it binds {@code bindPort}, advertises the
   * proxy's port (its {@code --port}) and connects out from {@code host}.
   */
  static String options(int bindPort, String host) {
    StringBuilder b = new StringBuilder();
    overrides(bindPort, host).forEach((k, v) -> b.append(" -D").append(k).append('=').append(v));
    return b.toString();
  }

  /** {@link #options} as config overrides, for a member in this JVM. */
  static Map<String, Object> overrides(int bindPort, String host) {
    return Map.of(
        "pekko.remote.artery.bind.hostname", "127.0.0.1",
        "pekko.remote.artery.bind.port", bindPort,
        "pekko.remote.artery.advanced.tcp.outbound-client-hostname", host);
  }

  /** Holds the connections {@code kind} names between {@code members} (hosts) and the rest. */
  synchronized void cut(Cut kind, Set<String> members) {
    if (kind != Cut.NONE && members.isEmpty()) {
      throw new IllegalArgumentException("cut " + kind + " of no member, expected one or more");
    }
    this.cut = kind;
    this.isolated = Set.copyOf(members);
    notifyAll();
  }

  /** Every connection carries bytes again, from where it stopped. */
  synchronized void heal() {
    cut(Cut.NONE, Set.of());
  }

  /** Whether a connection from {@code from} to the member {@code to} is held now. */
  synchronized boolean holds(String from, String to) {
    boolean fromIn = isolated.contains(from);
    boolean toIn = isolated.contains(to);
    return switch (cut) {
      case NONE -> false;
      case SYMMETRIC -> fromIn != toIn;
      case NO_SEND -> fromIn && !toIn;
      case NO_RECEIVE -> toIn && !fromIn;
    };
  }

  /** Waits while the connection from {@code from} to {@code to} is held, or until it closes. */
  synchronized void awaitOpen(String from, String to, PartitionProxy.Link link)
      throws InterruptedException {
    while (holds(from, to) && !link.closed()) {
      wait(200);
    }
  }

  /** Notes a connection from {@code from} to the member {@code to}. */
  void seen(String from, String to) {
    seen.add(from + "->" + to);
  }

  /** Every {@code from->to} pair of connections seen so far. */
  Set<String> seen() {
    return Set.copyOf(seen);
  }
}
