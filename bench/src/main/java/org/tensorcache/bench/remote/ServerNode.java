package org.tensorcache.bench.remote;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.lookup.LocalLookup;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.store.spec.CacheSpec;

/**
 * An embedded node (every role, a cluster of itself) holding a filled synthetic cache whose every
 * value was checked against the runner's function, with its binary lookup port on a free port.
 */
public record ServerNode(EmbeddedNodes node, String cacheId) implements AutoCloseable {
  /** The seed of the synthetic values the node holds and its clients check. */
  public static final long SEED = 42;

  /** Starts a node with {@code profiles} and {@code settings}, and fills cache {@code name}. */
  public static ServerNode start(
      Path dir, String name, int n, List<String> profiles, Map<String, Object> settings)
      throws Exception {
    Path jsonl = Files.createDirectories(dir).resolve("data.jsonl");
    SyntheticPreferences.write(jsonl, 42, n);
    ExampleSet data = ExampleSet.load(jsonl);
    CacheSpec spec = new CacheSpec(name, n, SyntheticRunner.FIELDS, 1024);
    CacheDefinition definition;
    try (SyntheticRunner runner = new SyntheticRunner(SEED)) {
      var fp = CacheDefinition.fingerprint(runner, data, spec);
      definition =
          new CacheDefinition(
              spec, fp, data, () -> new SyntheticRunner(SEED), dir.resolve("segments"), 64);
    }
    Map<String, Object> overrides = new HashMap<>(settings);
    overrides.put("tensorcache.lookup.endpoint.port", 0);
    long t0 = System.nanoTime();
    EmbeddedNodes node =
        EmbeddedNodes.start(dir.resolve("node"), List.of(definition), 1, overrides, profiles);
    try {
      long t1 = System.nanoTime();
      node.fill(definition.cacheId(), Duration.ofMinutes(10));
      System.out.printf(
          "server: Up in %.1f s, filled in %.1f s%n",
          (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9);
      long[] all = LongStream.range(0, n).toArray();
      Batch batch = node.client(0).lookup(definition.cacheId(), all);
      check(SEED, all, batch.floats("chosen_logp"), batch.floats("rejected_logp"), "held");
      return new ServerNode(node, definition.cacheId());
    } catch (Exception | Error e) {
      node.close();
      throw e;
    }
  }

  /** Throws unless the values are those {@link SyntheticRunner} computes with {@code seed}. */
  public static void check(
      long seed, long[] indices, float[] chosen, float[] rejected, String what) {
    for (int i = 0; i < indices.length; i++) {
      if (Float.floatToRawIntBits(chosen[i])
              != Float.floatToRawIntBits(SyntheticRunner.value(seed, 0, indices[i]))
          || Float.floatToRawIntBits(rejected[i])
              != Float.floatToRawIntBits(SyntheticRunner.value(seed, 1, indices[i]))) {
        throw new IllegalStateException("wrong value " + what + " for example " + indices[i]);
      }
    }
  }

  public ActorSystem<Void> system() {
    return node.system(0);
  }

  /** The node's binary lookup port, as {@code host:port}. */
  public String endpoint() {
    var a = TensorCacheNode.get(system()).endpointAddress().orElseThrow();
    return a.getHostString() + ":" + a.getPort();
  }

  /** The full path of the node's lookup actor, which a process that is no member can select. */
  String lookupPath() {
    LocalLookup.get(system()); // which starts the lookup actor
    return Cluster.get(system()).selfMember().address() + LookupActor.PATH;
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
