package org.tensorcache.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.tiers.DataPath;
import org.tensorcache.bench.tiers.Fills;
import org.tensorcache.bench.tiers.Gathers;
import org.tensorcache.bench.tiers.PlainArray;
import org.tensorcache.bench.tiers.TierConfig;
import org.tensorcache.bench.tiers.TiersReport;
import org.tensorcache.bench.tiers.Timings;
import org.tensorcache.bench.tiers.TrainerLoop;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;

/**
 * A cache ten times the node's memory budget, replicated by reference: the fill with the budget and
 * without it; a trainer's steps with prefetch and without it; the same steps with the whole cache
 * in memory and the plain {@code short[]} gather of their rows (the limit); random lookups within
 * the budget. Three nodes, one after the other in this JVM, as the budget and the prefetch depth
 * are node-wide, after a node that warms the JIT up: the two fills with the budget (the first and
 * the third measured node) bracket the one without. Writes {@code tiers.json} and {@code
 * tiers.png}; every value served is checked.
 */
final class TiersBench {
  private TiersBench() {}

  static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    long start = System.nanoTime();
    TierConfig c = TierConfig.of(size);
    Path dir = Files2.fresh(work.resolve("tiers"));
    // the runner ignores the examples' content: they give the cache its size and its fingerprint
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 42, c.n());
    ExampleSet data = ExampleSet.load(dir.resolve("data.jsonl"));
    PlainArray reference = PlainArray.of(TierConfig.SEED, c.n(), c.width());
    System.out.printf(
        "cache: %,d examples x [%d] bf16 = %d MiB in ranges of %d (%d KiB each); budget %d MiB;"
            + " B = %d; prefetch %d steps; training %.0f ms of sleep per step%n",
        c.n(),
        c.width(),
        c.cacheBytes() >> 20,
        c.rangeSize(),
        (long) c.rangeSize() * c.width() * 2 >> 10,
        c.budgetBytes() >> 20,
        c.batch(),
        c.prefetchSteps(),
        c.trainNanos() / 1e6);
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "tiers");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    results.put("config", c.toMap());

    // 0: the JIT's warm-up on a node of its own, so that the three measured nodes are alike (one
    // cache each). Without it the first node's fill took up to twice the CPU per example of the
    // later ones' and its session steps three times as long, the JIT compiling the fill, sharding,
    // persistence and H2 paths meanwhile. A smoke run has no figures to protect.
    if (c.warmsUp()) {
      SyntheticPreferences.write(dir.resolve("warm-up.jsonl"), 43, c.n());
      ExampleSet warmUpData = ExampleSet.load(dir.resolve("warm-up.jsonl"));
      CacheDefinition warmUp =
          c.definition("tiers-warm-up", warmUpData, dir.resolve("warm-up/seg"));
      try (EmbeddedNodes node =
          tierNode(
              dir.resolve("warm-up/node"), List.of(warmUp), c.budgetBytes(), c.prefetchSteps())) {
        print("warm-up fill", node.fill(warmUp.cacheId(), FILL_WITHIN));
        trainer(node, warmUp, reference, "jit-warm-up", c, false);
      }
    }

    // 1: the budget, prefetch on
    List<CacheDefinition> caches = c.definitions("tiers", data, dir.resolve("prefetch"));
    CacheDefinition cache = caches.get(0);
    List<EmbeddedNodes.Fill> fillBefore;
    TiersReport.LoopResults prefetch;
    Map<String, Object> random;
    try (EmbeddedNodes node =
        tierNode(dir.resolve("prefetch/node"), caches, c.budgetBytes(), c.prefetchSteps())) {
      if (!node.byReference(cache.cacheId())) {
        throw new IllegalStateException(
            "cache " + cache.cacheId() + " is gossiped, expected by reference");
      }
      fillBefore = fill(node, caches);
      print("fill with the budget", fillBefore);
      prefetch = trainer(node, cache, reference, "prefetch", c);
      random =
          Gathers.random(
              node.client(0),
              node.hot(0),
              cache,
              reference,
              c.n(),
              c.batch(),
              c.randomRounds(),
              c.warmUpNanos());
      System.out.println("random lookups: " + random);
    }

    // 2: the whole cache in memory, every range hot before the steps
    List<EmbeddedNodes.Fill> fillUnbounded;
    TiersReport.LoopResults inMemory;
    Timings[] againstArray;
    int passes;
    caches = c.definitions("tiers", data, dir.resolve("in-memory"));
    cache = caches.get(0);
    try (EmbeddedNodes node =
        tierNode(dir.resolve("in-memory/node"), caches, c.unboundedBytes(), c.prefetchSteps())) {
      fillUnbounded = fill(node, caches);
      print("fill without a budget", fillUnbounded);
      passes = Gathers.promoteAll(node.client(0), node.hot(0), cache, c.batch(), 200);
      System.out.printf(
          "every range hot after %d passes over every index: %d MiB held%n",
          passes, node.hot(0).bytesHeld() >> 20);
      inMemory = trainer(node, cache, reference, "in-memory", c);
      againstArray =
          Gathers.againstArray(
              node.client(0), cache, reference, inMemory.session().timedIndices(), c.warmUpNanos());
    }

    // 3: the budget, prefetch off
    List<EmbeddedNodes.Fill> fillAfter;
    TiersReport.LoopResults noPrefetch;
    caches = c.definitions("tiers", data, dir.resolve("no-prefetch"));
    cache = caches.get(0);
    try (EmbeddedNodes node =
        tierNode(dir.resolve("no-prefetch/node"), caches, c.budgetBytes(), 0)) {
      fillAfter = fill(node, caches);
      print("fill with the budget, again", fillAfter);
      noPrefetch = trainer(node, cache, reference, "no-prefetch", c);
    }

    TiersReport report =
        new TiersReport(
            c,
            new Fills(c.n(), List.of(fillBefore, fillUnbounded, fillAfter)),
            prefetch,
            noPrefetch,
            inMemory,
            passes,
            againstArray[0],
            againstArray[1],
            random);
    results.putAll(report.figures());
    results.put("run_s", Math.round((System.nanoTime() - start) / 1e8) / 10.0);
    report.print();
    Results.write(resultsDir.resolve("tiers.json"), results);
    report.chart(resultsDir.resolve("tiers.png"));
  }

  private static final Duration FILL_WITHIN = Duration.ofMinutes(30);

  /**
   * A node under {@code dir} with {@code caches}, a hot tier of {@code budgetBytes} and sessions
   * prefetching {@code prefetchSteps} steps ahead (0: off): both are node-wide settings, so each
   * configuration is a node of its own.
   */
  private static EmbeddedNodes tierNode(
      Path dir, List<CacheDefinition> caches, long budgetBytes, int prefetchSteps)
      throws Exception {
    return EmbeddedNodes.one(
        dir,
        caches,
        Map.of(
            "tensorcache.memory.budget", budgetBytes, "tensorcache.prefetch.steps", prefetchSteps));
  }

  /** Fills {@code caches} one after the other. */
  private static List<EmbeddedNodes.Fill> fill(EmbeddedNodes node, List<CacheDefinition> caches)
      throws Exception {
    List<EmbeddedNodes.Fill> fills = new java.util.ArrayList<>();
    for (CacheDefinition cache : caches) {
      fills.add(node.fill(cache.cacheId(), FILL_WITHIN));
    }
    return fills;
  }

  private static void print(String what, List<EmbeddedNodes.Fill> fills) {
    for (EmbeddedNodes.Fill f : fills) {
      print(what, f);
    }
  }

  private static void print(String what, EmbeddedNodes.Fill fill) {
    System.out.printf("%s: %.1f s, %.1f s of CPU%n", what, fill.seconds(), fill.cpuSeconds());
  }

  /**
   * A trainer's steps through a session, then the same calls without it; after each, the budget
   * held for the steps prefetched beyond the last is given back for what follows on the node.
   */
  private static TiersReport.LoopResults trainer(
      EmbeddedNodes node, CacheDefinition cache, PlainArray reference, String run, TierConfig c) {
    return trainer(node, cache, reference, run, c, true);
  }

  private static TiersReport.LoopResults trainer(
      EmbeddedNodes node,
      CacheDefinition cache,
      PlainArray reference,
      String run,
      TierConfig c,
      boolean print) {
    TrainerLoop.Result session =
        TrainerLoop.run(
            node.client(0),
            node.hot(0),
            cache.cacheId(),
            reference,
            run,
            c.batch(),
            c.steps(),
            c.trainNanos(),
            c.warmUpNanos());
    DataPath.giveBack(
        node.lookup(0), TrainerLoop.sessionId(run), session.nextStep(), c.prefetchSteps());
    if (print) {
      System.out.printf("trainer order, %s, session next(): %s%n", run, session.toMap());
    }
    String id = run + "-data-path";
    TrainerLoop.Result path =
        DataPath.run(
            node.lookup(0),
            node.client(0),
            node.hot(0),
            cache,
            reference,
            id,
            c.batch(),
            c.steps(),
            c.trainNanos(),
            c.warmUpNanos());
    DataPath.giveBack(node.lookup(0), id, path.nextStep(), c.prefetchSteps());
    if (print) {
      System.out.printf("trainer order, %s, data path: %s%n", run, path.toMap());
    }
    return new TiersReport.LoopResults(session, path);
  }
}
