package org.tensorcache.actors.testing;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.Coordinator;

/** Several cluster nodes in this JVM (loopback, port 0), each a full TensorCache node. */
public final class TestCluster implements AutoCloseable {
  public final List<ActorTestKit> nodes = new ArrayList<>();
  public final List<ActorRef<Coordinator.Command>> coordinators = new ArrayList<>();
  private final Path dataDir;
  private final List<CacheDefinition> caches;

  private final String extraConfig;

  public TestCluster(Path dataDir, List<CacheDefinition> caches) {
    this(dataDir, caches, "");
  }

  /** With {@code extraConfig} (HOCON) on top of the test configuration of every node. */
  public TestCluster(Path dataDir, List<CacheDefinition> caches, String extraConfig) {
    this.dataDir = dataDir;
    this.caches = caches;
    this.extraConfig = extraConfig;
  }

  /** The configuration of a test node with {@code roles} (quoted, comma-separated). */
  public static Config config(Path dataDir, String roles) {
    return config(dataDir, roles, "");
  }

  public static Config config(Path dataDir, String roles, String extra) {
    return ConfigFactory.parseString(extra)
        .withFallback(
            ConfigFactory.parseString(
                    "tensorcache.data-dir = \""
                        + dataDir.toAbsolutePath()
                        + "\"\n"
                        + "pekko.cluster.roles = ["
                        + roles
                        + "]\n")
                .withFallback(ConfigFactory.parseResources("cluster-test.conf")))
        .withFallback(ConfigFactory.parseResources("tensorcache-persistence-h2.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  /** Starts a node with these roles and joins it to the first node (or itself). */
  public ActorTestKit add(String roles) {
    ActorTestKit kit = ActorTestKit.create("TensorCacheTest", config(dataDir, roles, extraConfig));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    caches.forEach(node::register);
    ActorSystem<?> first = nodes.isEmpty() ? kit.system() : nodes.get(0).system();
    Cluster.get(kit.system())
        .manager()
        .tell(Join.create(Cluster.get(first).selfMember().address()));
    nodes.add(kit);
    coordinators.add(TensorCache.start(kit.system()).coordinator());
    return kit;
  }

  /** Waits until every node sees every node Up. */
  public void awaitUp(Duration within) {
    nodes
        .get(0)
        .createTestProbe()
        .awaitAssert(
            within,
            Duration.ofMillis(100),
            () -> {
              for (ActorTestKit kit : nodes) {
                long up =
                    java.util.stream.StreamSupport.stream(
                            Cluster.get(kit.system()).state().getMembers().spliterator(), false)
                        .filter(m -> m.status() == MemberStatus.up())
                        .count();
                if (up != nodes.size()) {
                  throw new AssertionError(up + " of " + nodes.size() + " nodes Up");
                }
              }
              return null;
            });
  }

  /** Leaves the cluster gracefully and stops the node. */
  public void leave(ActorTestKit kit) {
    Cluster.get(kit.system())
        .manager()
        .tell(Leave.create(Cluster.get(kit.system()).selfMember().address()));
    kit.system()
        .getWhenTerminated()
        .toCompletableFuture()
        .orTimeout(30, java.util.concurrent.TimeUnit.SECONDS)
        .join();
    int i = nodes.indexOf(kit);
    nodes.remove(i);
    coordinators.remove(i);
  }

  @Override
  public void close() {
    // one at a time: stopping several cluster systems at once times out their exit
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).shutdownTestKit();
    }
    nodes.clear();
  }
}
