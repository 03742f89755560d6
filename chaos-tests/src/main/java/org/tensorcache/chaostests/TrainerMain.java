package org.tensorcache.chaostests;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.launch.NodeLauncher;

/**
 * A trainer process of a chaos run: a cluster member with role {@code trainer} that opens rank 0 of
 * a one-rank run, resumes from a checkpoint step and prints one line per step read ({@link #line}),
 * flushed at once, so that a SIGKILL loses nothing printed.
 *
 * <p>{@code TrainerMain SEEDS RUN SEED GLOBAL_BATCH FROM_STEP TO_STEP job options...}, with SEEDS
 * as {@code host:port,...}, the PostgreSQL journal from {@code TENSORCACHE_PG_*}.
 */
public final class TrainerMain {
  private TrainerMain() {}

  /** Reads steps {@code [FROM_STEP, TO_STEP)} and prints {@code done} after the last one. */
  public static void main(String[] args) throws Exception {
    List<String> seeds = Arrays.asList(args[0].split(","));
    String run = args[1];
    long seed = Long.parseLong(args[2]);
    int globalBatch = Integer.parseInt(args[3]);
    long from = Long.parseLong(args[4]);
    long to = Long.parseLong(args[5]);
    String[] job = Arrays.copyOfRange(args, 6, args.length);
    CacheDefinition cache = JobDefinitions.definition(job);
    Map<String, Object> o =
        new HashMap<>(NodeLauncher.clusterOverrides("127.0.0.1", 0, seeds, List.of("trainer")));
    o.put("pekko.cluster.singleton.role", ChaosCluster.SINGLETON_ROLE);
    o.putAll(ChaosCluster.TIMING);
    Map<String, String> env = System.getenv();
    o.put("tensorcache.persistence.postgres.url", env.get("TENSORCACHE_PG_URL"));
    o.put("tensorcache.persistence.postgres.user", env.get("TENSORCACHE_PG_USER"));
    o.put("tensorcache.persistence.postgres.password", env.get("TENSORCACHE_PG_PASSWORD"));
    Path dataDir = cache.segmentDir().getParent().getParent();
    NodeLauncher.Node node =
        NodeLauncher.start(
            NodeLauncher.config(List.of("cluster", "postgres"), o, dataDir), List.of(cache));
    NodeLauncher.whenUp(node.system()).toCompletableFuture().get(90, TimeUnit.SECONDS);
    PrintStream out = System.out;
    out.println("trainer up");
    out.flush();
    SessionClient session =
        TensorCacheClient.create(node.system())
            .session(cache.cacheId(), run, 0, 1, seed, globalBatch);
    session.resumeFrom(from);
    for (long s = from; s < to; s++) {
      TrainingBatch b = session.next();
      var spec = b.values().spec();
      float[][] values = new float[spec.fields().size()][];
      for (int f = 0; f < values.length; f++) {
        values[f] = b.values().asFloats(spec.fields().get(f).name()); // F32 log-probs: exact
      }
      out.println(line(b.step(), b.indices(), values));
      out.flush();
    }
    out.println("done");
    out.flush();
    NodeLauncher.stop(node.system());
    System.exit(0);
  }

  /** The record of one step: its number, its indices and the raw bits of every value. */
  static String line(long step, long[] indices, float[][] values) {
    StringBuilder b = new StringBuilder("step ").append(step).append(" indices");
    for (long i : indices) {
      b.append(' ').append(i);
    }
    for (float[] field : values) {
      b.append(" |");
      for (float v : field) {
        b.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(v)));
      }
    }
    return b.toString();
  }

  /** Parses the step number of a {@link #line}, or -1 for other lines. */
  static long stepOf(String line) {
    if (!line.startsWith("step ")) {
      return -1;
    }
    return Long.parseLong(line.substring(5, line.indexOf(' ', 5)));
  }

  /** The lines of steps in {@code text}, in order. */
  static List<String> steps(String text) {
    List<String> out = new ArrayList<>();
    for (String l : text.split("\n")) {
      if (stepOf(l) >= 0) {
        out.add(l);
      }
    }
    return out;
  }
}
