package org.tensorcache.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
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
  private static final ObjectMapper JSON = new ObjectMapper();

  private TiersBench() {}

  /** Writes the chart; returns the figures. */
  static Map<String, Object> run(Path work, Path resultsDir, RunSize size) throws Exception {
    long start = System.nanoTime();
    TierConfig c = TierConfig.of(size);
    Path dir = Files2.fresh(work.resolve("tiers"));
    PlainArray reference = new PlainArray(TierConfig.SEED, c.examples(), c.width());
    System.out.println("cache: " + c);

    // the JIT's warm-up on a node of its own, so that the measured nodes are alike. Without it the
    // first node's fill took up to twice the CPU per example of the later ones' and its session
    // steps three times as long, the JIT compiling the fill, sharding, persistence and H2 paths.
    if (c.warmsUp()) {
      CacheDefinition warmUp =
          c.definition("tiers-warm-up", data(dir, "warm-up", 43, c), dir.resolve("warm-up/seg"));
      try (EmbeddedNodes node =
          node(dir.resolve("warm-up/node"), List.of(warmUp), c.budgetBytes(), c.prefetchSteps())) {
        fill(node, List.of(warmUp), "warm-up fill");
        TrainerLoop.run(node, warmUp, reference, "jit-warm-up", c);
      }
    }

    // the budget with prefetch, the whole cache in memory (every range hot before the steps), the
    // budget without prefetch: the two fills with the budget bracket the one without
    ExampleSet data = data(dir, "data", 42, c);
    List<String> runs = List.of("prefetch", "in-memory", "no-prefetch");
    List<String> fillNames =
        List.of("fill with the budget", "fill without a budget", "fill with the budget, again");
    List<List<EmbeddedNodes.Fill>> fills = new ArrayList<>();
    List<TrainerLoop.Loops> loops = new ArrayList<>();
    Gathers.Random random = null;
    Timings[] againstArray = null;
    int passes = 0;
    for (int i = 0; i < runs.size(); i++) {
      String run = runs.get(i);
      List<CacheDefinition> caches = c.definitions("tiers", data, dir.resolve(run));
      CacheDefinition cache = caches.get(0);
      long budget = i == 1 ? c.unboundedBudgetBytes() : c.budgetBytes();
      try (EmbeddedNodes node =
          node(dir.resolve(run + "/node"), caches, budget, i == 2 ? 0 : c.prefetchSteps())) {
        if (!node.byReference(cache.cacheId())) {
          throw new IllegalStateException(cache.cacheId() + " is gossiped, not by reference");
        }
        fills.add(fill(node, caches, fillNames.get(i)));
        if (i == 1) {
          passes = Gathers.promoteAll(node, cache, c.batch());
          System.out.printf(
              "every range hot after %d passes over every index: %d MiB held%n",
              passes, node.hot(0).bytesHeld() >> 20);
        }
        TrainerLoop.Loops l = TrainerLoop.run(node, cache, reference, run, c);
        System.out.printf("trainer order, %s: %s%n", run, JSON.writeValueAsString(l));
        loops.add(l);
        if (i == 0) {
          random = Gathers.random(node, cache, reference, c);
          System.out.println("random lookups: " + JSON.writeValueAsString(random));
        } else if (i == 1) {
          List<long[]> order = l.sessionNext().timedIndices();
          againstArray = Gathers.againstArray(node, cache, reference, order, c);
        }
      }
    }

    TiersReport report =
        new TiersReport(
            c,
            fills,
            loops.get(0),
            loops.get(2),
            loops.get(1),
            passes,
            againstArray[0],
            againstArray[1],
            random);
    Map<String, Object> results = new LinkedHashMap<>(Map.of("config", c));
    results.putAll(report.report());
    results.put("run_s", Math.round((System.nanoTime() - start) / 1e8) / 10.0);
    report.chart(resultsDir.resolve("tiers.png"));
    return results;
  }

  /** A data set of {@code c.examples()}: the runner ignores their content, not their count. */
  private static ExampleSet data(Path dir, String name, long seed, TierConfig c) throws Exception {
    SyntheticPreferences.write(dir.resolve(name + ".jsonl"), seed, c.examples());
    return ExampleSet.load(dir.resolve(name + ".jsonl"));
  }

  /** A node with a hot tier of {@code budgetBytes} and sessions prefetching {@code steps} ahead. */
  private static EmbeddedNodes node(
      Path dir, List<CacheDefinition> caches, long budgetBytes, int steps) throws Exception {
    return EmbeddedNodes.one(
        dir,
        caches,
        Map.of("tensorcache.memory.budget", budgetBytes, "tensorcache.prefetch.steps", steps));
  }

  private static List<EmbeddedNodes.Fill> fill(
      EmbeddedNodes node, List<CacheDefinition> caches, String what) throws Exception {
    List<EmbeddedNodes.Fill> fills = new ArrayList<>();
    for (CacheDefinition cache : caches) {
      EmbeddedNodes.Fill f = node.fill(cache.cacheId(), Duration.ofMinutes(30));
      System.out.printf("%s: %.1f s, %.1f s of CPU%n", what, f.seconds(), f.cpuSeconds());
      fills.add(f);
    }
    return fills;
  }
}
