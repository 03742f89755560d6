package org.tensorcache.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
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
 * without; a trainer's steps with prefetch and without; the same steps with the whole cache in
 * memory and the plain {@code short[]} gather of their rows (the limit); random lookups within the
 * budget. Three nodes one after the other in this JVM (the budget and the prefetch depth are
 * node-wide), the two with the budget bracketing the one without. Every value served is checked.
 */
final class TiersBench {
  private static final Duration FILL_WITHIN = Duration.ofMinutes(30);

  private TiersBench() {}

  static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    long start = System.nanoTime();
    TierConfig c = TierConfig.of(size);
    Path dir = Files2.fresh(work.resolve("tiers"));
    // the runner ignores the examples' content: they give the cache its size and its fingerprint
    SyntheticPreferences.write(dir.resolve("data.jsonl"), 42, c.n());
    ExampleSet data = ExampleSet.load(dir.resolve("data.jsonl"));
    PlainArray reference = new PlainArray(TierConfig.SEED, c.n(), TierConfig.WIDTH);
    System.out.printf(
        "cache: %,d examples x [%d] bf16 = %d MiB in ranges of %d (%d KiB each); budget %d MiB;"
            + " B = %d; prefetch %d steps; training %.0f ms of sleep per step%n",
        c.n(),
        TierConfig.WIDTH,
        c.cacheBytes() >> 20,
        TierConfig.RANGE_SIZE,
        (long) TierConfig.RANGE_SIZE * TierConfig.WIDTH * 2 >> 10,
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

    // 0: the JIT's warm-up on a node of its own, so that the measured nodes are alike. Without it
    // the first node's fill took up to twice the CPU per example of the later ones' and its session
    // steps three times as long, the JIT compiling the fill, sharding, persistence and H2 paths.
    if (c.warmsUp()) {
      SyntheticPreferences.write(dir.resolve("warm-up.jsonl"), 43, c.n());
      CacheDefinition warmUp =
          c.definition(
              "tiers-warm-up",
              ExampleSet.load(dir.resolve("warm-up.jsonl")),
              dir.resolve("warm-up/seg"));
      try (EmbeddedNodes node =
          node(dir.resolve("warm-up/node"), List.of(warmUp), c.budgetBytes(), c.prefetchSteps())) {
        print("warm-up fill", List.of(node.fill(warmUp.cacheId(), FILL_WITHIN)));
        TrainerLoop.run(node, warmUp, reference, "jit-warm-up", c);
      }
    }

    // 1: the budget, prefetch on
    List<CacheDefinition> caches = c.definitions("tiers", data, dir.resolve("prefetch"));
    List<EmbeddedNodes.Fill> fillBefore;
    TrainerLoop.Loops prefetch;
    Map<String, Object> random;
    try (EmbeddedNodes node =
        node(dir.resolve("prefetch/node"), caches, c.budgetBytes(), c.prefetchSteps())) {
      if (!node.byReference(caches.get(0).cacheId())) {
        throw new IllegalStateException(caches.get(0).cacheId() + " is gossiped, not by reference");
      }
      fillBefore = fill(node, caches, "fill with the budget");
      prefetch = trainer(node, caches.get(0), reference, "prefetch", c);
      random = Gathers.random(node, caches.get(0), reference, c);
      System.out.println("random lookups: " + random);
    }

    // 2: the whole cache in memory, every range hot before the steps
    caches = c.definitions("tiers", data, dir.resolve("in-memory"));
    List<EmbeddedNodes.Fill> fillUnbounded;
    TrainerLoop.Loops inMemory;
    Timings[] againstArray;
    int passes;
    try (EmbeddedNodes node =
        node(dir.resolve("in-memory/node"), caches, TierConfig.UNBOUNDED, c.prefetchSteps())) {
      fillUnbounded = fill(node, caches, "fill without a budget");
      passes = Gathers.promoteAll(node, caches.get(0), c.batch());
      System.out.printf(
          "every range hot after %d passes over every index: %d MiB held%n",
          passes, node.hot(0).bytesHeld() >> 20);
      inMemory = trainer(node, caches.get(0), reference, "in-memory", c);
      againstArray =
          Gathers.againstArray(
              node.client(0),
              caches.get(0),
              reference,
              inMemory.session().timedIndices(),
              c.warmUpNanos());
    }

    // 3: the budget, prefetch off
    caches = c.definitions("tiers", data, dir.resolve("no-prefetch"));
    List<EmbeddedNodes.Fill> fillAfter;
    TrainerLoop.Loops noPrefetch;
    try (EmbeddedNodes node = node(dir.resolve("no-prefetch/node"), caches, c.budgetBytes(), 0)) {
      fillAfter = fill(node, caches, "fill with the budget, again");
      noPrefetch = trainer(node, caches.get(0), reference, "no-prefetch", c);
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

  /** A node with a hot tier of {@code budgetBytes} and sessions prefetching {@code steps} ahead. */
  private static EmbeddedNodes node(
      Path dir, List<CacheDefinition> caches, long budgetBytes, int steps) throws Exception {
    return EmbeddedNodes.one(
        dir,
        caches,
        Map.of("tensorcache.memory.budget", budgetBytes, "tensorcache.prefetch.steps", steps));
  }

  /** Fills {@code caches} one after the other. */
  private static List<EmbeddedNodes.Fill> fill(
      EmbeddedNodes node, List<CacheDefinition> caches, String what) throws Exception {
    List<EmbeddedNodes.Fill> fills = new ArrayList<>();
    for (CacheDefinition cache : caches) {
      fills.add(node.fill(cache.cacheId(), FILL_WITHIN));
    }
    print(what, fills);
    return fills;
  }

  private static void print(String what, List<EmbeddedNodes.Fill> fills) {
    for (EmbeddedNodes.Fill f : fills) {
      System.out.printf("%s: %.1f s, %.1f s of CPU%n", what, f.seconds(), f.cpuSeconds());
    }
  }

  private static TrainerLoop.Loops trainer(
      EmbeddedNodes node, CacheDefinition cache, PlainArray reference, String run, TierConfig c) {
    TrainerLoop.Loops loops = TrainerLoop.run(node, cache, reference, run, c);
    System.out.printf("trainer order, %s, session next(): %s%n", run, loops.session().toMap());
    System.out.printf("trainer order, %s, data path: %s%n", run, loops.dataPath().toMap());
    return loops;
  }
}
