package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two cluster members behind {@link PartitionProxy}s: Artery connects out from each member's own
 * loopback address (so the proxies know the origin), a cut makes the members unreachable to each
 * other and a heal makes them reachable again over the same connections.
 */
class PartitionProxyTest {
  private final Network network = new Network();
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  @Test
  void cutsAndHealsBetweenTwoMembers() throws Exception {
    int seedPort = freePort();
    String a = network.nextHost();
    String b = network.nextHost();
    ActorSystem sa = member(a, seedPort, seedPort);
    ActorSystem sb = member(b, freePort(), seedPort);
    await("both Up", () -> upCount(sa) == 2 && upCount(sb) == 2);
    assertTrue(
        network.seen().containsAll(Set.of(a + "->" + b, b + "->" + a)),
        "connections seen by the proxies: " + network.seen());

    network.cut(Network.Cut.SYMMETRIC, Set.of(b));
    await("unreachable both ways", () -> unreachable(sa) && unreachable(sb));
    network.heal();
    await("reachable after the heal", () -> !unreachable(sa) && !unreachable(sb));

    network.cut(Network.Cut.NO_SEND, Set.of(b));
    await("b unreachable from a", () -> unreachable(sa));
    network.heal();
    await("reachable after the heal", () -> !unreachable(sa) && !unreachable(sb));

    network.cut(Network.Cut.NO_RECEIVE, Set.of(b));
    await("b unreachable from a", () -> unreachable(sa));
    network.heal();
    await("reachable after the heal", () -> !unreachable(sa) && !unreachable(sb));
    assertTrue(upCount(sa) == 2 && upCount(sb) == 2, "both members stay Up without downing");
  }

  private ActorSystem member(String host, int port, int seedPort) throws Exception {
    int bindPort = freePort();
    open.add(new PartitionProxy(port, bindPort, host, network));
    Map<String, Object> o = new HashMap<>(Network.overrides(bindPort, host));
    o.put("pekko.actor.provider", "cluster");
    o.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    o.put("pekko.remote.artery.canonical.port", port);
    o.put("pekko.cluster.seed-nodes", List.of("pekko://proxied@127.0.0.1:" + seedPort));
    o.put("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "2s");
    o.put("pekko.coordinated-shutdown.exit-jvm", "off");
    o.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    Config c = ConfigFactory.parseMap(o).withFallback(ConfigFactory.defaultReference()).resolve();
    ActorSystem s = ActorSystem.create("proxied", c);
    open.add(0, () -> s.terminate());
    return s;
  }

  private static long upCount(ActorSystem s) {
    long up = 0;
    for (var m : Cluster.get(s).state().getMembers()) {
      up += m.status() == MemberStatus.up() ? 1 : 0;
    }
    return up;
  }

  private static boolean unreachable(ActorSystem s) {
    return !Cluster.get(s).state().getUnreachable().isEmpty();
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": not within 60 s");
      }
      Thread.sleep(100);
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
