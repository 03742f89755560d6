package org.tensorcache.bench.remote;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.lookup.LookupSecurity;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.launch.NodeLauncher;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

/**
 * The remote part's client, no member and no replica: with option {@code transport} {@code
 * endpoint} it measures the node's binary lookup port at {@code at} ({@code host:port}), with
 * {@code artery} or {@code aeron} the node's lookup actor at {@code at} (its path) from an actor
 * system of its own; each next to Redis MGET of the same keys (key {@code tc:INDEX}, both floats as
 * 8 little-endian bytes).
 */
public final class RemoteClient {
  private static final Duration ASK = Duration.ofSeconds(10);
  private static final int[] BATCHES = {32, 256, 4096};

  private RemoteClient() {}

  /**
   * Options beside those: {@code cache}, {@code n}, {@code redis} (its port), {@code redis-pid},
   * {@code server-pid} and {@code work}.
   */
  public static void main(String[] args) {
    ClientProcess.serve(args, RemoteClient::measure);
  }

  private static List<Map<String, Object>> measure(Map<String, String> a, RunSize size)
      throws Exception {
    int n = Integer.parseInt(a.get("n"));
    int redisPort = Integer.parseInt(a.get("redis"));
    byte[][] keys = loadRedis(redisPort, n);
    Load.Targets redis = () -> new RedisTarget(new Jedis("127.0.0.1", redisPort), keys);
    String transport = a.get("transport");
    ActorSystem<Void> system =
        transport.equals("endpoint")
            ? null
            : ActorSystem.create(
                Behaviors.empty(), "tensorcache-client", config(transport, Path.of(a.get("work"))));
    try {
      Load.Targets tensorCache =
          system == null
              ? Load.port(a.get("at"), LookupSecurity.none(), a.get("cache"), 1)
              : actorTargets(system, a.get("at"), a.get("cache"));
      // JIT and connections warm before the first figure, every batch size (C2 takes a while on
      // a small busy machine), ending with the size measured first
      for (int i = BATCHES.length - 1; i >= 0; i--) {
        Load.run(redis, Map.of(), n, BATCHES[i], 2, 0, size.pick(1, 0.05, 0.01));
        Load.run(tensorCache, Map.of(), n, BATCHES[i], 2, 0, size.pick(4, 0.3, 0.01));
      }
      // the two systems alternate so that both see the same moment of a noisy machine; CPU per
      // batch of this process and of the server's, measured over the same window
      return Load.turns(
          List.of(
              new Load.Side(transport, tensorCache, Load.cpu(Long.parseLong(a.get("server-pid")))),
              new Load.Side("redis", redis, Load.cpu(Long.parseLong(a.get("redis-pid"))))),
          n,
          BATCHES,
          new int[] {1, 4},
          size.pick(2, 0.05, 0),
          size.pick(5, 0.3, 0.05),
          Map.of("next_to", transport));
    } finally {
      if (system != null) {
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
      }
    }
  }

  /** A remote actor system (no cluster) with the product's transport profile and serializers. */
  private static com.typesafe.config.Config config(String transport, Path work) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("pekko.actor.provider", "remote");
    overrides.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.loglevel", "WARNING");
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    List<String> profiles =
        transport.equals("aeron") ? List.of("aeron", "cluster") : List.of("cluster");
    return NodeLauncher.config(profiles, overrides, work);
  }

  /** The lookup actor at {@code path}, asked as any non-member would: one ask per batch. */
  private static Load.Targets actorTargets(ActorSystem<?> system, String path, String cacheId)
      throws Exception {
    ActorRef<LookupActor.Command> lookup =
        Adapter.toTyped(
            Adapter.toClassic(system)
                .actorSelection(path)
                .resolveOne(ASK)
                .toCompletableFuture()
                .get(ASK.toSeconds() + 1, TimeUnit.SECONDS));
    return () ->
        indices -> {
          LookupActor.Values reply =
              AskPattern.<LookupActor.Command, LookupActor.Values>askWithStatus(
                      lookup,
                      replyTo -> new LookupActor.GetValues(cacheId, indices, replyTo),
                      ASK,
                      system.scheduler())
                  .toCompletableFuture()
                  .get(ASK.toSeconds() + 1, TimeUnit.SECONDS);
          return () -> {
            if (!Arrays.equals(indices, reply.indices())) {
              throw new IllegalStateException("reply for other indices");
            }
            return Load.expect(indices, (float[]) reply.values()[0], (float[]) reply.values()[1]);
          };
        };
  }

  /** Loads every example's values into the Redis server on {@code port}; returns the keys. */
  private static byte[][] loadRedis(int port, int n) {
    byte[][] keys = new byte[n][];
    try (Jedis jedis = new Jedis("127.0.0.1", port)) {
      Pipeline pipe = jedis.pipelined();
      for (int i = 0; i < n; i++) {
        keys[i] = ("tc:" + i).getBytes(StandardCharsets.US_ASCII);
        pipe.set(
            keys[i],
            ByteBuffer.allocate(8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putFloat(SyntheticRunner.value(ServerNode.SEED, 0, i))
                .putFloat(SyntheticRunner.value(ServerNode.SEED, 1, i))
                .array());
      }
      pipe.sync();
      if (jedis.dbSize() != n) {
        throw new IllegalStateException("redis holds " + jedis.dbSize() + " keys, expected " + n);
      }
    }
    return keys;
  }

  /** One connection per thread; MGET of the batch's keys. */
  private record RedisTarget(Jedis jedis, byte[][] keys) implements Load.Target {
    @Override
    public IntSupplier fetch(long[] indices) {
      byte[][] wanted = new byte[indices.length][];
      for (int i = 0; i < indices.length; i++) {
        wanted[i] = keys[(int) indices[i]];
      }
      List<byte[]> reply = jedis.mget(wanted);
      return () -> {
        float[][] v = new float[2][indices.length];
        for (int i = 0; i < indices.length; i++) {
          if (reply.size() != indices.length || reply.get(i) == null || reply.get(i).length != 8) {
            throw new IllegalStateException("Redis holds no 8-byte value of example " + indices[i]);
          }
          ByteBuffer b = ByteBuffer.wrap(reply.get(i)).order(ByteOrder.LITTLE_ENDIAN);
          v[0][i] = b.getFloat();
          v[1][i] = b.getFloat();
        }
        return Load.expect(indices, v[0], v[1]);
      };
    }

    @Override
    public void close() {
      jedis.close();
    }
  }
}
