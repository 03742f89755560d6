package org.tensorcache.bench.remote;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.SyntheticRunner;

/**
 * An embedded TensorCache node (every role, a cluster of itself) over one Artery transport, its
 * cache filled, with a lookup actor at a fixed path that a process without a replica can ask, and
 * its binary lookup port on any free port.
 */
public final class ServerNode implements AutoCloseable {
  private final EmbeddedNodes node;
  private final String lookupPath;
  private final float[][] values;

  private ServerNode(EmbeddedNodes node, String lookupPath, float[][] values) {
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
    overrides.put("tensorcache.lookup.endpoint.port", 0);
    overrides.putAll(settings);
    long t0 = System.nanoTime();
    EmbeddedNodes node = EmbeddedNodes.start(dataDir, List.of(definition), 1, overrides, profiles);
    try {
      long t1 = System.nanoTime();
      node.fill(definition.cacheId(), Duration.ofMinutes(10));
      System.out.printf(
          "server: Up in %.1f s, filled in %.1f s%n",
          (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9);
      float[][] values = checkedValues(node.client(0), definition);
      String path =
          Cluster.get(node.system(0)).selfMember().address() + lookupActor(node.system(0));
      return new ServerNode(node, path, values);
    } catch (Exception | Error e) {
      node.close();
      throw e;
    }
  }

  /**
   * The path (below the node's address) of the node's lookup actor under a fixed name, so that a
   * process that is no member can select it: the node's own if it starts one, else one started here
   * with the product's lookup behaviour.
   */
  private static String lookupActor(ActorSystem<Void> system) throws Exception {
    String name = "tensorcache-lookup";
    try {
      return Adapter.toClassic(system)
          .actorSelection("/system/" + name)
          .resolveOne(Duration.ofSeconds(2))
          .toCompletableFuture()
          .get(3, TimeUnit.SECONDS)
          .path()
          .toStringWithoutAddress();
    } catch (java.util.concurrent.ExecutionException e) {
      ActorRef<LookupActor.Command> lookup =
          system.systemActorOf(LookupActor.create(), name, Props.empty());
      return lookup.path().toStringWithoutAddress();
    }
  }

  /** The node's actor system. */
  public ActorSystem<Void> system() {
    return node.system(0);
  }

  /** The node's binary lookup port, as {@code host:port}. */
  public String endpoint() {
    var a = TensorCacheNode.get(system()).endpointAddress().orElseThrow();
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

  /** Stops the node (bounded by the launcher: an aeron-udp shutdown can hang, and is told). */
  @Override
  public void close() {
    try {
      node.close();
    } catch (RuntimeException e) {
      System.err.println("server node did not stop in time: " + e);
    }
  }
}
