package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.launch.tls.ClusterCertificates;
import org.tensorcache.launch.tls.TransportSecurity;
import org.tensorcache.launch.tls.TransportSecurityException;

/**
 * Three nodes with the tls profile and certificates made by the certs command form a cluster and
 * answer a lookup across it; a node with a certificate of another CA, a node on plain TCP and a
 * node whose certificate does not name its host never become members.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsClusterTest {
  private static final Logger log = LoggerFactory.getLogger(TlsClusterTest.class);

  /** How long an intruder is watched: several join attempts and gossip rounds. */
  private static final Duration WATCH = Duration.ofSeconds(12);

  @TempDir static Path dir;
  private Path certs;
  private Path foreignCerts;
  private SmallCache cache;
  private final List<NodeLauncher.Node> nodes = new ArrayList<>();
  private ActorSystem<Void> intruder;

  @BeforeAll
  void startThreeNodesOverTls() throws Exception {
    certs = dir.resolve("certs");
    foreignCerts = dir.resolve("foreign");
    Instant now = Instant.now();
    ClusterCertificates.write(request(certs, "127.0.0.1"), now);
    // another CA entirely, with the same cluster name and host
    ClusterCertificates.write(request(foreignCerts, "127.0.0.1"), now);
    // the cluster's own CA (reused from the directory), but for another host
    ClusterCertificates.write(request(certs, "other-host.example"), now);

    cache = new SmallCache(dir.resolve("cache"), 128, 64);
    for (int i = 0; i < 3; i++) {
      Config config = config(List.of("tls", "cluster", "h2"), nodeDir(certs, "127.0.0.1"), null);
      nodes.add(NodeLauncher.start(config, List.of(cache.definition())));
    }
    for (NodeLauncher.Node node : nodes) {
      Cluster.get(node.system())
          .manager()
          .tell(Join.create(ClusterProbes.address(nodes.get(0).system())));
    }
    for (NodeLauncher.Node node : nodes) {
      NodeLauncher.whenUp(node.system()).toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void threeNodesFormAClusterOverTlsAndAnswerALookupAcrossIt() throws Exception {
    for (NodeLauncher.Node node : nodes) {
      Config config = node.system().settings().config();
      assertEquals("tls-tcp", config.getString("pekko.remote.artery.transport"));
    }
    ActorTestKit kit = ActorTestKit.create(nodes.get(2).system());
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            () -> {
              for (NodeLauncher.Node node : nodes) {
                assertEquals(
                    3,
                    upMembers(node.system()),
                    "members Up seen by " + ClusterProbes.address(node.system()));
              }
              return null;
            });

    // the third node asks the first node's lookup actor: request and values cross TLS
    String id = cache.fingerprint.cacheId();
    long[] asked = {0, 33, 64, 127};
    float[][] none = {new float[asked.length], new float[asked.length]};
    TensorCacheNode asking = TensorCacheNode.get(nodes.get(2).system());
    int[] missing = asking.replication(id).gather(asking.registry().get(id), asked, none, false);
    assertEquals(asked.length, missing.length, "the third node holds none of the values yet");
    ActorRef<LookupActor.Command> remote = ClusterProbes.lookupActorOf(kit, nodes.get(0).system());
    TestProbe<StatusReply<LookupActor.Values>> replies = kit.createTestProbe();
    remote.tell(new LookupActor.GetValues(id, asked, replies.ref()));
    StatusReply<LookupActor.Values> reply = replies.receiveMessage(Duration.ofSeconds(60));
    assertTrue(reply.isSuccess(), reply::toString);
    float[][] reference = cache.reference();
    assertArrayEquals(
        ClusterProbes.pick(reference[0], asked), (float[]) reply.getValue().values()[0]);
    assertArrayEquals(
        ClusterProbes.pick(reference[1], asked), (float[]) reply.getValue().values()[1]);
  }

  @Test
  void aNodeWithACertificateOfAnotherCaNeverBecomesAMember() {
    Config config =
        config(List.of("tls", "cluster", "h2"), nodeDir(foreignCerts, "127.0.0.1"), seed());
    TransportSecurity.check(config); // its own files are fine: only the cluster refuses it
    intruder = ActorSystem.create(Behaviors.empty(), NodeLauncher.SYSTEM_NAME, config);
    assertNeverAMember(intruder);
  }

  @Test
  void aNodeOnPlainTcpNeverBecomesAMember() {
    intruder =
        ActorSystem.create(
            Behaviors.empty(),
            NodeLauncher.SYSTEM_NAME,
            config(List.of("cluster", "h2"), null, seed()));
    assertEquals("tcp", TransportSecurity.transport(intruder.settings().config()));
    assertNeverAMember(intruder);
  }

  @Test
  void aNodeWhoseCertificateDoesNotNameItsHostIsRefusedAtStartAndByItsPeers() {
    Config config =
        config(List.of("tls", "cluster", "h2"), nodeDir(certs, "other-host.example"), seed());
    TransportSecurityException refused =
        assertThrows(TransportSecurityException.class, () -> NodeLauncher.startClient(config));
    assertTrue(
        refused.getMessage().contains("does not name this node's host 127.0.0.1"),
        refused.getMessage());
    // started anyway: its certificate is the cluster CA's and shares the cluster's name, but the
    // members that dial it back at 127.0.0.1 find that name missing from it
    intruder = ActorSystem.create(Behaviors.empty(), NodeLauncher.SYSTEM_NAME, config);
    assertNeverAMember(intruder);
  }

  /** Over {@link #WATCH}: no member lists the intruder, and it never joins anything. */
  private void assertNeverAMember(ActorSystem<?> intruder) {
    Address intruderAddress = ClusterProbes.address(intruder);
    long end = System.nanoTime() + WATCH.toNanos();
    while (System.nanoTime() < end) {
      for (NodeLauncher.Node node : nodes) {
        for (Member m : Cluster.get(node.system()).state().getMembers()) {
          assertFalse(
              m.address().equals(intruderAddress),
              ClusterProbes.address(node.system()) + " lists the intruder as " + m.status());
        }
        assertEquals(3, upMembers(node.system()), "the cluster keeps its three members Up");
      }
      MemberStatus self = Cluster.get(intruder).selfMember().status();
      assertFalse(
          Set.of(MemberStatus.joining(), MemberStatus.weaklyUp(), MemberStatus.up()).contains(self),
          "the intruder sees itself " + self);
      assertTrue(
          StreamSupport.stream(Cluster.get(intruder).state().getMembers().spliterator(), false)
              .noneMatch(m -> !m.address().equals(intruderAddress)),
          "the intruder sees no member");
      sleep(500);
    }
  }

  @AfterEach
  void stopIntruder() {
    if (intruder != null) {
      intruder.terminate();
      try {
        intruder.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
      } catch (Exception e) {
        log.warn("intruder did not stop within 20 s: {}", e.toString());
      }
      intruder = null;
    }
  }

  @AfterAll
  void stopNodes() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      ActorSystem<Void> system = nodes.get(i).system();
      Cluster.get(system).manager().tell(Leave.create(ClusterProbes.address(system)));
      system.terminate();
      try {
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        log.warn(
            "node {} did not stop within 30 s: {}", ClusterProbes.address(system), e.toString());
      }
    }
  }

  private Config config(List<String> profiles, Path tlsDir, List<String> seeds) {
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides("127.0.0.1", 0, List.of(), List.of()));
    overrides.put("pekko.cluster.seed-nodes", seeds == null ? List.of() : seeds);
    overrides.put("pekko.cluster.roles", List.of("compute", "lookup"));
    if (tlsDir != null) {
      overrides.put("tensorcache.security.tls.dir", tlsDir.toString());
    }
    overrides.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.put("pekko.cluster.distributed-data.gossip-interval", "500ms");
    overrides.put("tensorcache.coordinator.tick", "300ms");
    overrides.put("pekko.loglevel", "WARNING");
    return NodeLauncher.config(profiles, overrides, dir.resolve("node"));
  }

  /** The first node as an intruder's seed: it joins as a real node would, through InitJoin. */
  private List<String> seed() {
    return List.of(ClusterProbes.address(nodes.get(0).system()).toString());
  }

  private static Path nodeDir(Path out, String host) {
    return ClusterCertificates.nodeDir(out, host);
  }

  private static ClusterCertificates.Request request(Path out, String host) {
    return new ClusterCertificates.Request(
        out, List.of(host), List.of(), "tensorcache", 90, 180, 2048, false);
  }

  private static long upMembers(ActorSystem<?> system) {
    return StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
        .filter(m -> m.status() == MemberStatus.up())
        .count();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
