package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LookupActor;

/**
 * Two nodes in this JVM over Artery's aeron-udp transport form a cluster, answer a lookup from one
 * node to the other's lookup actor, fill and serve.
 */
class AeronClusterTest {
  private static final Logger log = LoggerFactory.getLogger(AeronClusterTest.class);

  @TempDir Path dir;
  private final List<NodeLauncher.Node> nodes = new ArrayList<>();
  private Path aeronDirs;

  @Test
  void twoNodesOverAeronUdpAnswerARemoteLookupFillAndServeALookupOnTheSecond() throws Exception {
    SmallCache cache = new SmallCache(dir.resolve("cache"), 192, 64);
    float[][] reference = cache.reference();
    aeronDirs = Files.createTempDirectory("tensorcache-aeron-test");
    NodeLauncher.Node first = start("first", cache);
    NodeLauncher.Node second = start("second", cache);
    Cluster.get(first.system()).manager().tell(Join.create(address(first)));
    Cluster.get(second.system()).manager().tell(Join.create(address(first)));
    for (NodeLauncher.Node node : nodes) {
      NodeLauncher.whenUp(node.system()).toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    String transport =
        first.system().settings().config().getString("pekko.remote.artery.transport");
    assertEquals("aeron-udp", transport);

    ActorTestKit kit = ActorTestKit.create(second.system());
    String id = cache.fingerprint.cacheId();

    // before any fill, the second node asks the first node's lookup actor, found through the
    // receptionist as members find one: the request and the values of its reply cross aeron-udp
    long[] asked = {1, 70, 150, 191};
    float[][] none = {new float[asked.length], new float[asked.length]};
    TensorCacheNode asking = TensorCacheNode.get(second.system());
    int[] missing = asking.replication(id).gather(asking.registry().get(id), asked, none, false);
    assertEquals(asked.length, missing.length, "the second node holds none of the values");
    ActorRef<LookupActor.Command> remote = ClusterProbes.lookupActorOf(kit, first.system());
    assertEquals(address(first), remote.path().address(), "the first node's lookup actor");
    TestProbe<StatusReply<LookupActor.Values>> replies = kit.createTestProbe();
    remote.tell(new LookupActor.GetValues(id, asked, replies.ref()));
    StatusReply<LookupActor.Values> reply = replies.receiveMessage(Duration.ofSeconds(40));
    assertTrue(reply.isSuccess(), reply::toString);
    assertArrayEquals(asked, reply.getValue().indices());
    assertArrayEquals(
        ClusterProbes.pick(reference[0], asked), (float[]) reply.getValue().values()[0]);
    assertArrayEquals(
        ClusterProbes.pick(reference[1], asked), (float[]) reply.getValue().values()[1]);

    TestProbe<StatusReply<Done>> acks = kit.createTestProbe();
    second.coordinator().tell(new Coordinator.StartFill(id, acks.ref()));
    assertEquals(StatusReply.ack(), acks.receiveMessage(Duration.ofSeconds(20)));
    TestProbe<Coordinator.Status> statuses = kit.createTestProbe();
    statuses.awaitAssert(
        Duration.ofSeconds(40),
        Duration.ofMillis(300),
        () -> {
          second.coordinator().tell(new Coordinator.GetStatus(statuses.ref()));
          CacheStatus s = statuses.receiveMessage(Duration.ofSeconds(5)).caches()[0];
          assertEquals(s.ranges(), s.persistedRanges(), s.toString());
          return null;
        });

    long[] indices = {0, 5, 63, 64, 100, 191, 7};
    TensorCacheClient client = TensorCacheClient.create(second.system());
    Batch batch =
        kit.createTestProbe()
            .awaitAssert(
                Duration.ofSeconds(20), Duration.ofMillis(200), () -> client.lookup(id, indices));
    assertArrayEquals(ClusterProbes.pick(reference[0], indices), batch.floats("chosen_logp"));
    assertArrayEquals(ClusterProbes.pick(reference[1], indices), batch.floats("rejected_logp"));
  }

  private NodeLauncher.Node start(String name, SmallCache cache) throws IOException {
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides("127.0.0.1", 0, List.of(), List.of()));
    overrides.put("pekko.cluster.seed-nodes", List.of());
    overrides.put("pekko.cluster.roles", List.of("compute", "lookup"));
    overrides.put(
        "pekko.remote.artery.advanced.aeron.aeron-dir",
        aeronDirs.resolve(name).toAbsolutePath().toString());
    // the default term buffer allows 2 MiB messages; stay well under it, no JVM flags needed
    overrides.put("pekko.remote.artery.advanced.maximum-frame-size", "512 KiB");
    overrides.put("tensorcache.lookup.max-reply-bytes", "128 KiB");
    overrides.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    overrides.put("pekko.cluster.distributed-data.gossip-interval", "500ms");
    overrides.put("tensorcache.coordinator.tick", "300ms");
    overrides.put("pekko.loglevel", "WARNING");
    Config config =
        NodeLauncher.config(List.of("aeron", "cluster", "h2"), overrides, dir.resolve("node"));
    NodeLauncher.Node node = NodeLauncher.start(config, List.of(cache.definition()));
    nodes.add(node);
    return node;
  }

  @AfterEach
  void stopAndClean() throws IOException {
    // one at a time, the second leaving first; an aeron-udp shutdown can hang, so each is bounded
    for (int i = nodes.size() - 1; i >= 0; i--) {
      NodeLauncher.Node node = nodes.get(i);
      Cluster.get(node.system()).manager().tell(Leave.create(address(node)));
      node.system().terminate();
      try {
        node.system().getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
      } catch (Exception e) {
        log.warn("node {} did not stop within 20 s: {}", address(node), e.toString());
      }
    }
    nodes.clear();
    if (aeronDirs != null) {
      try (Stream<Path> files = Files.walk(aeronDirs)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static org.apache.pekko.actor.Address address(NodeLauncher.Node node) {
    return ClusterProbes.address(node.system());
  }
}
