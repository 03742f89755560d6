package org.tensorcache.bench.remote;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.launch.ClusterFill;
import org.tensorcache.launch.NodeLauncher;

/**
 * An embedded TensorCache node (every role, a cluster of itself) over one Artery transport, its
 * cache filled, with a lookup actor at a fixed path that a process without a replica can ask, and
 * its binary lookup port on any free port.
 */
public final class ServerNode implements AutoCloseable {
  private final NodeLauncher.Node node;
  private final String lookupPath;
  private final float[][] values;

  private ServerNode(NodeLauncher.Node node, String lookupPath, float[][] values) {
    this.node = node;
    this.lookupPath = lookupPath;
    this.values = values;
  }

  /**
   * Starts a node with {@code profiles} (e.g. {@code local} for Artery TCP, {@code aeron, local}
   * for Aeron UDP) on a free loopback port, fills {@code definition} and checks every value it
   * serves against the runner's function.
   */
  static ServerNode start(List<String> profiles, CacheDefinition definition, Path dataDir)
      throws Exception {
    return start(profiles, Map.of(), definition, dataDir);
  }

  /**
   * The same with {@code settings} (HOCON paths, e.g. the lookup port's TLS material) on top; the
   * cache's values must be those of {@link SyntheticRunner} with {@link RemoteBench#SEED}.
   */
  public static ServerNode start(
      List<String> profiles, Map<String, Object> settings, CacheDefinition definition, Path dataDir)
      throws Exception {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    overrides.put("tensorcache.lookup.endpoint.port", 0);
    overrides.putAll(settings);
    NodeLauncher.Node node =
        NodeLauncher.start(NodeLauncher.config(profiles, overrides, dataDir), List.of(definition));
    try {
      var up = NodeLauncher.whenUp(node.system());
      Cluster cluster = Cluster.get(node.system());
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
      long t0 = System.nanoTime();
      up.toCompletableFuture().get(60, TimeUnit.SECONDS);
      long t1 = System.nanoTime();
      fill(node, definition.cacheId());
      System.out.printf(
          "server: Up in %.1f s, filled in %.1f s%n",
          (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9);
      float[][] values = checkedValues(TensorCacheClient.create(node.system()), definition);
      String path = cluster.selfMember().address() + lookupActor(node);
      return new ServerNode(node, path, values);
    } catch (Exception | Error e) {
      NodeLauncher.stop(node.system());
      throw e;
    }
  }

  /**
   * The path (below the node's address) of the node's lookup actor under a fixed name, so that a
   * process that is no member can select it: the node's own if it starts one, else one started here
   * with the product's lookup behaviour.
   */
  private static String lookupActor(NodeLauncher.Node node) throws Exception {
    String name = "tensorcache-lookup";
    try {
      return Adapter.toClassic(node.system())
          .actorSelection("/system/" + name)
          .resolveOne(Duration.ofSeconds(2))
          .toCompletableFuture()
          .get(3, TimeUnit.SECONDS)
          .path()
          .toStringWithoutAddress();
    } catch (java.util.concurrent.ExecutionException e) {
      ActorRef<LookupActor.Command> lookup =
          node.system().systemActorOf(LookupActor.create(), name, Props.empty());
      return lookup.path().toStringWithoutAddress();
    }
  }

  /** Fills the cache; the coordinator singleton may take a while to start on a busy machine. */
  private static void fill(NodeLauncher.Node node, String cacheId) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        ClusterFill.run(node.system(), node.coordinator(), cacheId, false);
        return;
      } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
        // the ask's own timeout fails its future (an ExecutionException) before the wait for it
        boolean timedOut =
            e instanceof java.util.concurrent.TimeoutException
                || e.getCause() instanceof java.util.concurrent.TimeoutException;
        if (!timedOut) {
          throw e;
        }
        if (attempt == 6) {
          throw new IllegalStateException("the coordinator did not answer within 60 s", e);
        }
      }
    }
  }

  /** The node's actor system. */
  public org.apache.pekko.actor.typed.ActorSystem<Void> system() {
    return node.system();
  }

  /** The node's binary lookup port, as {@code host:port}. */
  public String endpoint() {
    var a = TensorCacheNode.get(node.system()).endpointAddress().orElseThrow();
    return a.getHostString() + ":" + a.getPort();
  }

  /** The lookup actor's full path, to select it from another actor system. */
  String lookupPath() {
    return lookupPath;
  }

  /** The node's values of every example, per field in index order, as its replica has them. */
  float[][] values() {
    return values;
  }

  private static float[][] checkedValues(TensorCacheClient client, CacheDefinition definition) {
    int n = (int) definition.spec().n();
    long[] all = new long[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    Batch batch = client.lookup(definition.cacheId(), all);
    float[] chosen = batch.floats("chosen_logp");
    float[] rejected = batch.floats("rejected_logp");
    for (int i = 0; i < n; i++) {
      if (Float.floatToRawIntBits(chosen[i])
              != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 0, i))
          || Float.floatToRawIntBits(rejected[i])
              != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 1, i))) {
        throw new IllegalStateException("server holds a wrong value for example " + i);
      }
    }
    return new float[][] {chosen, rejected};
  }

  /** Stops the node (bounded: an aeron-udp shutdown can hang). */
  @Override
  public void close() {
    node.system().terminate();
    try {
      node.system().getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      System.err.println("server node did not stop within 20 s: " + e);
    }
  }
}
