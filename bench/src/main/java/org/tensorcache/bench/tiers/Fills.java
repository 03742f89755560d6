package org.tensorcache.bench.tiers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The timed fills of the three measured nodes, with the budget, without it and with it again,
 * several per node: a fill of the cache takes one to two seconds here, and single fills of the same
 * node configuration differed by up to 2x from one run to the next.
 */
public final class Fills {
  private static final String[] NODES = {
    "with_budget_before", "without_budget", "with_budget_after"
  };

  private final int examples;
  private final List<List<TierNode.FillTime>> nodes;

  /** The fills of {@code examples} each, per node in the order of {@link #NODES}. */
  public Fills(int examples, List<List<TierNode.FillTime>> nodes) {
    if (nodes.size() != NODES.length) {
      throw new IllegalArgumentException(nodes.size() + " nodes' fills, expected 3");
    }
    this.examples = examples;
    this.nodes = List.copyOf(nodes);
  }

  /** The median fill rate with the budget (mean of both nodes) over the one without it. */
  public double ratio() {
    return (rate(0) + rate(2)) / 2 / rate(1);
  }

  /** The figures for a results file: per node every fill's rate, the median and its CPU. */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < NODES.length; i++) {
      Map<String, Object> node = new LinkedHashMap<>();
      List<Long> rates = new ArrayList<>();
      for (TierNode.FillTime f : nodes.get(i)) {
        rates.add(Math.round(examples / f.seconds()));
      }
      node.put("examples_per_s", rates);
      node.put("median_examples_per_s", Math.round(rate(i)));
      node.put("median_cpu_us_per_example", Math.round(cpuMicros(i)));
      m.put(NODES[i], node);
    }
    m.put("ratio_with_without", Math.round(ratio() * 100) / 100.0);
    return m;
  }

  /** The printed line: median rates and CPU per example, the ratio and its target. */
  public String line(double target) {
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
    return examples / median(node, TierNode.FillTime::seconds);
  }

  private double cpuMicros(int node) {
    return median(node, TierNode.FillTime::cpuSeconds) * 1e6 / examples;
  }

  private double median(int node, ToDoubleFunction<TierNode.FillTime> value) {
    double[] v = nodes.get(node).stream().mapToDouble(value).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
