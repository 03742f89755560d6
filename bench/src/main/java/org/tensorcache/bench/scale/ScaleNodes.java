package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.replica.ReplicaView;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * One to a few TensorCache nodes in this JVM, joined into one cluster over Artery TCP on loopback
 * (the embedded profile, each node on its own port), sharing the H2 journal and segment directory.
 */
public final class ScaleNodes implements AutoCloseable {
  /**
   * Examples per range: ten million examples make 1,221 ranges, well under MAX_RANGES, and a block
   * (64 KiB of values) stays under the 128 KiB gossip budget, so values are replicated by gossip.
   * Fewer, larger ranges also mean fewer segment files, each written with two fsyncs.
   */
  public static final int RANGE_SIZE = 8192;

  /** Whole ranges per forward pass: the synthetic runner costs nothing per call. */
  static final int MICRO_BATCH = RANGE_SIZE;

  /** Seed of the synthetic runner's values. */
  public static final long SEED = 11;

  private static final Duration ASK = Duration.ofSeconds(10);

  private final List<NodeLauncher.Node> nodes = new ArrayList<>();
  private int statusTimeouts;

  private ScaleNodes() {}

  /**
   * A cache of {@code n} synthetic examples named {@code name}, with segments under {@code dir}.
   */
  public static CacheDefinition definition(Path dir, String name, int n) {
    return definition(dir, name, n, RANGE_SIZE);
  }

  /** The same with {@code rangeSize} examples per range, computed a whole range at a time. */
  static CacheDefinition definition(Path dir, String name, int n, int rangeSize) {
    ExampleSet data = LazyPreferences.dataset(name, n);
    SyntheticRunner runner = new SyntheticRunner(SEED);
    CacheSpec spec = new CacheSpec(name, n, runner.fields(), rangeSize);
    return new CacheDefinition(
        spec,
        CacheDefinition.fingerprint(runner, data, spec),
        data,
        () -> new SyntheticRunner(SEED),
        dir.resolve(name + "-segments"),
        rangeSize);
  }

  /** {@link #start(Path, List, int, Map)} with the embedded profile as it is. */
  static ScaleNodes start(Path dataDir, List<CacheDefinition> caches, int count) throws Exception {
    return start(dataDir, caches, count, Map.of());
  }

  /**
   * Starts {@code count} nodes of the embedded profile with {@code overrides} (HOCON paths), every
   * role, each registering {@code caches}; the first joins itself, the others join it. Returns once
   * every member is Up.
   */
  static ScaleNodes start(
      Path dataDir, List<CacheDefinition> caches, int count, Map<String, Object> overrides)
      throws Exception {
    return start(dataDir, caches, count, overrides, List.of("local"));
  }

  /**
   * The same with {@code profiles} in place of the embedded one alone (e.g. {@code tls, local}: the
   * embedded profile with Artery over TLS; {@code overrides} then name the TLS files).
   */
  public static ScaleNodes start(
      Path dataDir,
      List<CacheDefinition> caches,
      int count,
      Map<String, Object> overrides,
      List<String> profiles)
      throws Exception {
    ScaleNodes cluster = new ScaleNodes();
    try {
      Address first = null;
      for (int i = 0; i < count; i++) {
        NodeLauncher.Node node =
            NodeLauncher.start(NodeLauncher.config(profiles, overrides, dataDir), caches);
        cluster.nodes.add(node);
        var up = NodeLauncher.whenUp(node.system());
        if (first == null) {
          first = Cluster.get(node.system()).selfMember().address();
        }
        Cluster.get(node.system()).manager().tell(Join.create(first));
        up.toCompletableFuture().get(2, TimeUnit.MINUTES);
      }
      cluster.awaitMembersUp(count, Duration.ofMinutes(1));
      return cluster;
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
  }

  /** The number of nodes. */
  public int size() {
    return nodes.size();
  }

  /** The actor system of node {@code node}, the first 0. */
  public org.apache.pekko.actor.typed.ActorSystem<Void> system(int node) {
    return nodes.get(node).system();
  }

  /**
   * Asks the coordinator to fill {@code cacheId} and returns the seconds until every range is
   * persisted, polling every 20 ms (finer than the command line's 200 ms progress bar).
   */
  public double fillSeconds(String cacheId, Duration within) throws Exception {
    NodeLauncher.Node n0 = nodes.get(0);
    long t0 = System.nanoTime();
    statusTimeouts = 0;
    AskPattern.<Coordinator.Command, StatusReply<Done>>ask(
            n0.coordinator(), r -> new Coordinator.StartFill(cacheId, r), ASK, scheduler())
        .toCompletableFuture()
        .get(ASK.toMillis(), TimeUnit.MILLISECONDS)
        .getValue();
    while (true) {
      CacheStatus s;
      try {
        s = ClusterFill.status(n0.system(), n0.coordinator(), cacheId);
      } catch (TimeoutException | ExecutionException e) {
        // the coordinator answers status between the events it persists: during a large fill
        // the answer can take longer than the command line's 10 s; count it and ask again
        if (!timedOut(e)) {
          throw e;
        }
        statusTimeouts++;
        continue;
      }
      if (s.persistedRanges() == s.ranges()) {
        return (System.nanoTime() - t0) / 1e9;
      }
      if (System.nanoTime() - t0 > within.toNanos()) {
        throw new IllegalStateException(
            "fill of " + cacheId + " not persisted within " + within + ": " + s);
      }
      Thread.sleep(20);
    }
  }

  /**
   * Waits until the coordinator singleton answers, so that a fill timed next counts from a started
   * coordinator: on a busy machine it can start well after the members are Up.
   */
  public void awaitCoordinator(String cacheId, Duration within) throws Exception {
    NodeLauncher.Node n0 = nodes.get(0);
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      try {
        ClusterFill.status(n0.system(), n0.coordinator(), cacheId);
        return;
      } catch (TimeoutException | ExecutionException e) {
        if (!timedOut(e) || System.nanoTime() > deadline) {
          throw new IllegalStateException("the coordinator did not answer within " + within, e);
        }
      }
    }
  }

  /** Whether an ask failed by its timeout: the wait for it, or the ask's own (its cause). */
  private static boolean timedOut(Exception e) {
    return e instanceof TimeoutException || e.getCause() instanceof TimeoutException;
  }

  /** Status asks of the last {@link #fillSeconds} that got no answer within 10 s. */
  public int statusTimeouts() {
    return statusTimeouts;
  }

  /** Waits until node {@code node}'s read view holds every range of {@code cacheId} complete. */
  public void awaitReplica(int node, String cacheId, Duration within) throws InterruptedException {
    var view = new ReplicaView(TensorCacheNode.get(system(node)).registry());
    int ranges = view.spec(cacheId).rangeCount();
    long deadline = System.nanoTime() + within.toNanos();
    for (int r = 0; r < ranges; r++) {
      Block b;
      while ((b = view.block(cacheId, r)) == null || !b.isComplete()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "node " + node + ": range " + r + " of " + cacheId + " not replicated: " + b);
        }
        Thread.sleep(10);
      }
    }
  }

  /** Examples each node's runners computed since it started. */
  public long[] computedExamples() {
    long[] out = new long[nodes.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = TensorCacheNode.get(system(i)).computedExamples();
    }
    return out;
  }

  private org.apache.pekko.actor.typed.Scheduler scheduler() {
    return system(0).scheduler();
  }

  private void awaitMembersUp(int count, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    for (NodeLauncher.Node node : nodes) {
      while (true) {
        long up =
            java.util.stream.StreamSupport.stream(
                    Cluster.get(node.system()).state().getMembers().spliterator(), false)
                .filter(m -> m.status() == MemberStatus.up())
                .count();
        if (up == count) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(up + " of " + count + " members Up after " + within);
        }
        Thread.sleep(20);
      }
    }
  }

  /**
   * Stops the nodes one at a time, the last first: stopping several at once slows their exit. A
   * node that does not stop within the launcher's bound does not keep the others running: they are
   * stopped, then its failure is thrown.
   */
  @Override
  public void close() {
    RuntimeException first = null;
    for (int i = nodes.size() - 1; i >= 0; i--) {
      try {
        NodeLauncher.stop(nodes.get(i).system());
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    nodes.clear();
    if (first != null) {
      throw first;
    }
  }
}
