package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.testing.Postgres;
import org.tensorcache.testing.Reaper;

/**
 * Spot capacity reclaims two of three node processes at once (SIGKILL), with the postgres profile
 * and its production timing: the survivor, a minority, takes the downing lease in PostgreSQL and
 * stays Up, its lookup port answering every lookup of the persisted ranges with their persisted
 * bits from the kill until well past the downing; a node started later joins it, and the fill of
 * the whole cache completes without computing a persisted range again.
 */
class MassPreemptionTest {
  /**
   * The job; the cache's name is new every run, so that a server kept across runs (the one of
   * {@code TENSORCACHE_PG_URL}) holds no coordinator state of it yet: no fill was ever asked for.
   */
  private final List<String> job =
      List.of(
          "--examples",
          "512",
          "--range-size",
          "64",
          "--micro-batch",
          "16",
          "--embed",
          "16",
          "--hidden",
          "16",
          "--cache-name",
          "preempted-" + Long.toHexString(System.currentTimeMillis()));

  /**
   * The nodes' settings on top of their profiles: none, so that the production timing is tested;
   * Pekko's INFO lines (the resolver's, the singletons') go to the node logs.
   */
  private static final Map<String, String> PRODUCTION = Map.of("PEKKO_LOG", "INFO");

  /** Ranges computed and persisted before the kill (through lookups); the rest after it. */
  private static final Set<Integer> PERSISTED = Set.of(0, 1, 2, 3);

  /** Bounds on things that must happen, generous for a loaded two-core machine. */
  private static final Duration PATIENCE = Duration.ofSeconds(180);

  /** How long lookups go on after the downing decision, past the survivor's takeover. */
  private static final Duration AFTER_DECISION = Duration.ofSeconds(30);

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void survivorsOfAMassPreemptionServeOnAndTheFillCompletesWhenNodesReturn() throws Exception {
    assumeTrue(
        Postgres.available(),
        "no PostgreSQL: set TENSORCACHE_PG_URL or install Debian's postgresql (bash .ci/run does)");
    Path work = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "preempt");
    Path dataDir = work.resolve("data");
    Files.createDirectories(work.resolve("logs"));
    try (Postgres pg = Postgres.obtain();
        ChaosCluster cluster =
            new ChaosCluster(
                ChaosMain.launcher(), dataDir, work.resolve("logs"), pg.env(), PRODUCTION)) {
      List<String> nodeArgs = new ArrayList<>(job);
      nodeArgs.addAll(List.of("--lookup-port", "0", "--management-port", "0"));
      cluster.job(nodeArgs);
      NodeProcess first = cluster.startNode(); // it makes the data set and the model alone
      NodeProcess second = cluster.launch();
      NodeProcess survivor = cluster.launch();
      cluster.awaitUp(second);
      cluster.awaitUp(survivor);
      CacheDefinition cache = definition(dataDir);
      String cacheId = cache.cacheId();

      try (RemoteLookupClient all = RemoteLookupClient.connect(lookupPorts(cluster), PATIENCE)) {
        for (int range : PERSISTED) {
          lookupOnce(all, cacheId, indicesOf(cache, range)); // computed on demand, then persisted
        }
      }
      awaitPersisted(cache, PERSISTED);
      // no fill was asked for: the rest of the cache is left for after the kill
      assertEquals(PERSISTED, Faults.persisted(cache.segmentDir()), "ranges persisted before");
      ExpectedValues persisted = ExpectedValues.load(cache, PERSISTED);
      Map<NodeProcess, Integer> marks = Faults.marks(cluster.live());

      LocalTime killedAt = LocalTime.now();
      first.kill(); // the oldest: it hosts the coordinator
      second.kill();
      cluster.gone(first);
      cluster.gone(second);

      long lookups = 0;
      try (RemoteLookupClient remote =
          RemoteLookupClient.connect(List.of(NodeLog.lookupPort(survivor)), PATIENCE)) {
        SplittableRandom random = new SplittableRandom(7);
        long decidedAt = 0;
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (decidedAt == 0 || System.nanoTime() - decidedAt < AFTER_DECISION.toNanos()) {
          long[] indices = randomIndices(cache, random);
          assertEquals(
              0,
              persisted.mismatches(remote.lookup(cacheId, indices)),
              "bits differ from segments");
          lookups++;
          assertTrue(survivor.isAlive(), "the survivor exited; see " + survivor.log());
          if (decidedAt == 0 && survivor.logText().contains("SBR took decision")) {
            decidedAt = System.nanoTime();
          }
          assertTrue(
              decidedAt != 0 || System.nanoTime() < deadline,
              "no downing decision within " + PATIENCE.toSeconds() + " s; see " + survivor.log());
          Thread.sleep(100);
        }
      }
      String log = survivor.logText();
      assertTrue(
          log.contains("SBR took decision AcquireLeaseAndDownUnreachable"),
          "no lease decision: " + survivor.log());
      assertTrue(log.contains("took lease 'tensorcache-pekko-sbr'"), "no lease: " + survivor.log());
      assertFalse(
          log.contains("including myself"), "the survivor downed itself: " + survivor.log());
      awaitReady(survivor);
      System.out.printf(
          "mass preemption: killed at %s; the survivor: unreachable %s, lease and downing %s,"
              + " removed %s, singletons started %s; %d lookups of persisted ranges, every one"
              + " equal to the segments%n",
          killedAt,
          NodeLog.timeOf(log, "Marking node as UNREACHABLE"),
          NodeLog.timeOf(log, "took lease 'tensorcache-pekko-sbr'"),
          NodeLog.timeOf(log, "Leader is removing"),
          NodeLog.linesWith(log, "Singleton manager starting singleton actor"),
          lookups);

      NodeProcess returned = cluster.startNode(); // joins the survivor
      fill(dataDir, survivor, pg.env(), work.resolve("logs").resolve("fill.log"));
      Set<Integer> every = new TreeSet<>();
      for (int r = 0; r < cache.spec().rangeCount(); r++) {
        every.add(r);
      }
      assertEquals(every, Faults.persisted(cache.segmentDir()), "ranges with a segment");
      assertEquals(
          0,
          Faults.computedIn(List.of(survivor, returned), marks, cacheId, PERSISTED),
          "examples of persisted ranges computed again");
      ExpectedValues filled = ExpectedValues.load(cache);
      try (RemoteLookupClient remote =
          RemoteLookupClient.connect(List.of(NodeLog.lookupPort(returned)), PATIENCE)) {
        for (int r = 0; r < cache.spec().rangeCount(); r++) {
          assertEquals(0, filled.mismatches(remote.lookup(cacheId, indicesOf(cache, r))));
        }
      }
      for (int r : PERSISTED) { // what was persisted before the kill is what is kept now
        float[][] before = persisted.valuesOf(indicesOf(cache, r));
        float[][] after = filled.valuesOf(indicesOf(cache, r));
        for (int f = 0; f < before.length; f++) {
          assertArrayEquals(before[f], after[f], "range " + r + " field " + f);
        }
      }
    }
  }

  private CacheDefinition definition(Path dataDir) throws Exception {
    List<String> args = new ArrayList<>(job);
    args.addAll(List.of("--data-dir", dataDir.toString()));
    return JobDefinitions.definition(args.toArray(String[]::new));
  }

  /**
   * Looks {@code indices} up, again if the nodes gave up waiting for their computation (the first
   * one loads the model on a loaded machine): this is the set-up, not what is tested.
   */
  private static void lookupOnce(RemoteLookupClient client, String cacheId, long[] indices) {
    for (int attempt = 1; ; attempt++) {
      try {
        client.lookup(cacheId, indices);
        return;
      } catch (LookupFailedException e) {
        if (attempt == 3) {
          throw e;
        }
      }
    }
  }

  private static long[] indicesOf(CacheDefinition cache, int range) {
    long from = (long) range * cache.spec().rangeSize();
    long to = Math.min(cache.spec().n(), from + cache.spec().rangeSize());
    long[] indices = new long[(int) (to - from)];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = from + i;
    }
    return indices;
  }

  /** 32 indices of the persisted ranges, at random. */
  private static long[] randomIndices(CacheDefinition cache, SplittableRandom random) {
    List<Integer> ranges = List.copyOf(PERSISTED);
    long[] indices = new long[32];
    for (int i = 0; i < indices.length; i++) {
      long[] range = indicesOf(cache, ranges.get(random.nextInt(ranges.size())));
      indices[i] = range[random.nextInt(range.length)];
    }
    return indices;
  }

  private static void awaitPersisted(CacheDefinition cache, Set<Integer> ranges) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!Faults.persisted(cache.segmentDir()).containsAll(ranges)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "ranges "
                + ranges
                + " not persisted within "
                + PATIENCE.toSeconds()
                + " s: "
                + Faults.persisted(cache.segmentDir()));
      }
      Thread.sleep(200);
    }
  }

  private static List<InetSocketAddress> lookupPorts(ChaosCluster cluster) throws Exception {
    List<InetSocketAddress> out = new ArrayList<>();
    for (NodeProcess n : cluster.live()) {
      out.add(NodeLog.lookupPort(n));
    }
    return out;
  }

  /** Waits until the node's {@code /ready} answers 200: Up, and its coordinator restored. */
  private void awaitReady(NodeProcess n) throws Exception {
    URI ready = URI.create("http://127.0.0.1:" + NodeLog.managementPort(n) + "/ready");
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    int status = -1;
    while (System.nanoTime() < deadline) {
      try {
        status =
            http.send(
                    HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode();
      } catch (java.io.IOException e) {
        status = -1;
      }
      if (status == 200) {
        return;
      }
      Thread.sleep(500);
    }
    throw new AssertionError(n.name() + " /ready answered " + status + "; see " + n.log());
  }

  /** {@code ./tensorcache fill} through the survivor, which must exit 0 (all ranges persisted). */
  private void fill(Path dataDir, NodeProcess seed, Map<String, String> pg, Path log)
      throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                ChaosMain.launcher().toString(),
                "fill",
                "--seeds",
                "127.0.0.1:" + seed.port(),
                "--journal",
                "postgres",
                "--timeout",
                "120",
                "--data-dir",
                dataDir.toString()));
    cmd.addAll(job);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.environment().putAll(pg);
    pb.environment().put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    pb.environment().put("JAVA_OPTS", "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1");
    Process p = Reaper.start(pb);
    if (!p.waitFor(PATIENCE.toSeconds() * 2, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the fill did not end; see " + log);
    }
    assertEquals(0, p.exitValue(), "the fill failed; see " + log);
  }
}
