package org.tensorcache.bench.remote;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.launch.NodeLauncher;
import redis.clients.jedis.Jedis;

/**
 * The client process: no cluster member and no replica; it asks the server's binary lookup port, or
 * its lookup actor over Artery from an actor system of its own; next to each figure, Redis MGET of
 * the same keys. Prints one line {@code RESULT <json>} with the rows.
 */
public final class RemoteClient {
  private static final Duration ASK = Duration.ofSeconds(10);
  private static final int[] BATCHES = {32, 256, 4096};

  private RemoteClient() {}

  /**
   * Usage: {@code RemoteClient --cache ID --n N --redis PORT --redis-pid PID --server-pid PID
   * --work DIR [--quick | --smoke]}, then one line {@code run artery|aeron LOOKUP-PATH} or {@code
   * run endpoint HOST:PORT} per server on standard input; each prints a {@code RESULT} line. The
   * JVM stays up between servers, so the second one is measured warm as well.
   */
  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1); // a failed check or server: exit at once, whatever threads are left
    }
    System.exit(0); // an aeron-udp system may leave non-daemon threads behind
  }

  private static void run(String[] args) throws Exception {
    Map<String, String> a = ClientProcess.options(args);
    int n = Integer.parseInt(a.get("n"));
    byte[][] keys = new byte[n][];
    for (int i = 0; i < n; i++) {
      keys[i] = RedisValues.key(i);
    }
    int redisPort = Integer.parseInt(a.get("redis"));
    Load.Targets redis = () -> new RedisTarget(new Jedis("127.0.0.1", redisPort), keys);
    // CPU per batch of this process and of the server's, measured over the same window
    Map<String, LongSupplier> tcCpu = new LinkedHashMap<>();
    tcCpu.put("client", CpuMeter.self());
    tcCpu.put("server", CpuMeter.process(Long.parseLong(a.get("server-pid"))));
    Map<String, LongSupplier> redisCpu = new LinkedHashMap<>();
    redisCpu.put("client", CpuMeter.self());
    redisCpu.put("server", CpuMeter.process(Long.parseLong(a.get("redis-pid"))));
    RunSize size = ClientProcess.size(a);

    var in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null && line.startsWith("run "); ) {
      String[] words = line.split(" ");
      String transport = words[1];
      ActorSystem<Void> system =
          transport.equals("endpoint")
              ? null
              : ActorSystem.create(
                  Behaviors.empty(),
                  "tensorcache-client",
                  config(transport, Path.of(a.get("work"))));
      try {
        Load.Targets tensorCache =
            system == null
                ? () -> new EndpointTarget(endpointClient(words[2]), a.get("cache"))
                : actorTargets(system, words[2], a.get("cache"));
        // JIT and connections warm before the first figure, every batch size (C2 takes a while on
        // a small busy machine), ending with the size measured first
        for (int i = BATCHES.length - 1; i >= 0; i--) {
          Load.run(redis, Map.of(), n, BATCHES[i], 2, 0, size.pick(1, 0.05, 0.01));
          Load.run(tensorCache, Map.of(), n, BATCHES[i], 2, 0, size.pick(4, 0.3, 0.01));
        }

        double warmup = size.pick(2, 0.05, 0);
        double measure = size.pick(5, 0.3, 0.05);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int batch : BATCHES) {
          for (int threads : new int[] {1, 4}) {
            // the two systems alternate so that both see the same moment of a noisy machine
            var tc = Load.run(tensorCache, tcCpu, n, batch, threads, warmup, measure);
            rows.add(row(transport, transport, tc));
            var r = Load.run(redis, redisCpu, n, batch, threads, warmup, measure);
            rows.add(row("redis", transport, r));
          }
        }
        System.out.println(ClientProcess.RESULT + new ObjectMapper().writeValueAsString(rows));
      } finally {
        if (system != null) {
          system.terminate();
          system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
        }
      }
    }
  }

  private static Map<String, Object> row(
      String system, String nextTo, Map<String, Object> figures) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("system", system);
    row.put("next_to", nextTo);
    row.putAll(figures);
    return row;
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

  private static Load.Targets actorTargets(ActorSystem<?> system, String path, String cacheId)
      throws Exception {
    ActorRef<LookupActor.Command> lookup =
        Adapter.toTyped(
            Adapter.toClassic(system)
                .actorSelection(path)
                .resolveOne(ASK)
                .toCompletableFuture()
                .get(ASK.toSeconds() + 1, TimeUnit.SECONDS));
    return () -> new TensorCacheTarget(system, lookup, cacheId);
  }

  /** A client of the node's lookup port at {@code hostPort}: one per thread, one connection. */
  private static RemoteLookupClient endpointClient(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    var address =
        new InetSocketAddress(
            hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    return RemoteLookupClient.connect(List.of(address), ASK);
  }

  /** The node's binary lookup port, into arrays this thread reuses: what a data loader would do. */
  private static final class EndpointTarget implements Load.Target<float[][]> {
    private final RemoteLookupClient client;
    private final String cacheId;
    private final float[][] out = new float[2][4096];

    EndpointTarget(RemoteLookupClient client, String cacheId) {
      this.client = client;
      this.cacheId = cacheId;
    }

    @Override
    public float[][] fetch(long[] indices) {
      client.lookupInto(cacheId, indices, out);
      return out;
    }

    @Override
    public int check(long[] indices, float[][] reply) {
      for (int i = 0; i < indices.length; i++) {
        expect(indices[i], reply[0][i], reply[1][i]);
      }
      return indices.length;
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /** Asks the server's lookup actor, as any non-member would: one ask per batch. */
  private record TensorCacheTarget(
      ActorSystem<?> system, ActorRef<LookupActor.Command> lookup, String cacheId)
      implements Load.Target<LookupActor.Values> {
    @Override
    public LookupActor.Values fetch(long[] indices) throws Exception {
      return AskPattern.<LookupActor.Command, LookupActor.Values>askWithStatus(
              lookup,
              replyTo -> new LookupActor.GetValues(cacheId, indices, replyTo),
              ASK,
              system.scheduler())
          .toCompletableFuture()
          .get(ASK.toSeconds() + 1, TimeUnit.SECONDS);
    }

    @Override
    public int check(long[] indices, LookupActor.Values reply) {
      if (!java.util.Arrays.equals(indices, reply.indices())) {
        throw new IllegalStateException("reply for other indices");
      }
      for (int i = 0; i < indices.length; i++) {
        expect(indices[i], ((float[]) reply.values()[0])[i], ((float[]) reply.values()[1])[i]);
      }
      return indices.length;
    }
  }

  /** One connection per thread; MGET of the batch's keys. */
  private record RedisTarget(Jedis jedis, byte[][] keys) implements Load.Target<List<byte[]>> {
    @Override
    public List<byte[]> fetch(long[] indices) {
      byte[][] wanted = new byte[indices.length][];
      for (int i = 0; i < indices.length; i++) {
        wanted[i] = keys[(int) indices[i]];
      }
      return jedis.mget(wanted);
    }

    @Override
    public int check(long[] indices, List<byte[]> reply) {
      if (reply.size() != indices.length) {
        throw new IllegalStateException("MGET answered " + reply.size() + " values");
      }
      for (int i = 0; i < indices.length; i++) {
        if (reply.get(i) == null || reply.get(i).length != 8) {
          throw new IllegalStateException("Redis holds no 8-byte value of example " + indices[i]);
        }
        ByteBuffer v = ByteBuffer.wrap(reply.get(i)).order(ByteOrder.LITTLE_ENDIAN);
        expect(indices[i], v.getFloat(), v.getFloat());
      }
      return indices.length;
    }

    @Override
    public void close() {
      jedis.close();
    }
  }

  private static void expect(long index, float chosen, float rejected) {
    if (Float.floatToRawIntBits(chosen)
            != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 0, index))
        || Float.floatToRawIntBits(rejected)
            != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 1, index))) {
      throw new IllegalStateException("wrong value served for example " + index);
    }
  }
}
