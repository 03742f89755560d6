package org.tensorcache.bench.tiers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.store.tier.HotTier;

/**
 * An embedded single-JVM node (every role, the journal in H2 under its own directory) with a given
 * hot-tier budget and prefetch depth: both are node-wide settings, so each configuration of the
 * benchmark is a node of its own.
 */
public final class TierNode implements AutoCloseable {
  private final NodeLauncher.Node node;

  private TierNode(NodeLauncher.Node node) {
    this.node = node;
  }

  /**
   * Starts a node under {@code dir} with {@code caches}, a hot tier of {@code budgetBytes} and
   * sessions prefetching {@code prefetchSteps} steps ahead (0: off); returns once it is Up.
   */
  public static TierNode start(
      Path dir, List<CacheDefinition> caches, long budgetBytes, int prefetchSteps)
      throws Exception {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("tensorcache.memory.budget", budgetBytes);
    overrides.put("tensorcache.prefetch.steps", prefetchSteps);
    overrides.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    // the benchmark's nodes run one after the other in this JVM
    overrides.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    NodeLauncher.Node node =
        NodeLauncher.start(NodeLauncher.config(List.of("local"), overrides, dir), caches);
    try {
      var up = NodeLauncher.whenUp(node.system());
      Cluster cluster = Cluster.get(node.system());
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
      up.toCompletableFuture().get(2, TimeUnit.MINUTES);
      return new TierNode(node);
    } catch (Exception | Error e) {
      NodeLauncher.stop(node.system());
      throw e;
    }
  }

  /**
   * A timed fill.
   *
   * @param seconds from the fill's start until every range was persisted
   * @param cpuSeconds the CPU time of every thread of the JVM meanwhile
   */
  public record FillTime(double seconds, double cpuSeconds) {}

  /**
   * Waits for the coordinator singleton (its start, a recovery from the journal, is not the fill's
   * cost), then fills {@code cacheId}.
   */
  public FillTime fill(String cacheId) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        ClusterFill.status(node.system(), node.coordinator(), cacheId);
        break;
      } catch (TimeoutException | ExecutionException e) { // the ask's own timeout, or ours
        if (attempt == 6) {
          throw new IllegalStateException("the coordinator did not answer within 60 s", e);
        }
      }
    }
    var os =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    AskPattern.<Coordinator.Command, StatusReply<Done>>ask(
            node.coordinator(),
            r -> new Coordinator.StartFill(cacheId, r),
            Duration.ofSeconds(10),
            node.system().scheduler())
        .toCompletableFuture()
        .get(11, TimeUnit.SECONDS)
        .getValue();
    // ClusterFill.run looks every 100 ms, a tenth of a fill of a few seconds: here every 10 ms
    CacheStatus status = ClusterFill.status(node.system(), node.coordinator(), cacheId);
    while (status.persistedRanges() < status.ranges()) {
      Thread.sleep(10);
      status = ClusterFill.status(node.system(), node.coordinator(), cacheId);
    }
    return new FillTime((System.nanoTime() - t0) / 1e9, (os.getProcessCpuTime() - cpu0) / 1e9);
  }

  /** A member client of this node. */
  public TensorCacheClient client() {
    return TensorCacheClient.create(node.system());
  }

  /** The node's lookup path, which sessions prefetch through. */
  public LocalLookup lookup() {
    return LocalLookup.get(node.system());
  }

  /** The node's hot tier, with its statistics. */
  public HotTier hot() {
    return TensorCacheNode.get(node.system()).hotTier();
  }

  /**
   * Whether the node replicates {@code cacheId} by reference (its ranges are too large to gossip).
   */
  public boolean byReference(String cacheId) {
    return TensorCacheNode.get(node.system()).byReference(cacheId);
  }

  @Override
  public void close() {
    NodeLauncher.stop(node.system());
  }
}
