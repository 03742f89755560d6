package org.tensorcache.bench.tiers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.tensorcache.bench.fixture.EmbeddedNodes;
import org.tensorcache.bench.report.Stats;

/**
 * The timed fills of {@code examples} each of the three measured nodes (with the budget, without,
 * with it again), several per node: a fill takes a second or two here, and single fills of the same
 * node differed by up to 2x from one run to the next.
 */
public record Fills(int examples, List<List<EmbeddedNodes.Fill>> nodes) {
  private static final List<String> NODES =
      List.of("with_budget_before", "without_budget", "with_budget_after");

  /** The median fill rate with the budget (mean of both nodes) over the one without it. */
  double ratio() {
    return (rate(0) + rate(2)) / 2 / rate(1);
  }

  Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < NODES.size(); i++) {
      Map<String, Object> node = new LinkedHashMap<>();
      node.put(
          "examples_per_s",
          nodes.get(i).stream().map(f -> Math.round(examples / f.seconds())).toList());
      node.put("median_examples_per_s", Math.round(rate(i)));
      node.put("median_cpu_us_per_example", Math.round(cpuMicros(i)));
      m.put(NODES.get(i), node);
    }
    m.put("ratio_with_without", Stats.round2(ratio()));
    return m;
  }

  String line(double target) {
    return String.format(
        "fill examples/s (median of %d per node): budget %.0f (before), no budget %.0f, budget"
            + " %.0f (after): ratio %.2f (target >= %.2f): target %s; CPU us per example %.0f /"
            + " %.0f / %.0f",
        nodes.get(0).size(),
        rate(0),
        rate(1),
        rate(2),
        ratio(),
        target,
        ratio() >= target ? "met" : "missed",
        cpuMicros(0),
        cpuMicros(1),
        cpuMicros(2));
  }

  private double rate(int node) {
    return examples / median(node, EmbeddedNodes.Fill::seconds);
  }

  private double cpuMicros(int node) {
    return median(node, EmbeddedNodes.Fill::cpuSeconds) * 1e6 / examples;
  }

  private double median(int node, ToDoubleFunction<EmbeddedNodes.Fill> value) {
    return Stats.median(nodes.get(node).stream().mapToDouble(value).toArray());
  }
}
