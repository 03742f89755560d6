package org.tensorcache.bench.byo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The timed chunks of one side of the comparison added up: examples, seconds, seconds per named
 * part (forward pass, log-softmax, time outside the runner, CPU), and each chunk's rate.
 */
final class Tally {
  private int examples;
  private double seconds;
  private final Map<String, Double> parts = new LinkedHashMap<>();
  private final List<Double> chunkRates = new ArrayList<>();
  private final Map<String, Double> threadCpu = new LinkedHashMap<>();

  /** Adds a chunk of {@code examples} timed at {@code seconds}, with its parts. */
  void add(int examples, double seconds, Map<String, Double> chunkParts) {
    this.examples += examples;
    this.seconds += seconds;
    chunkRates.add(examples / seconds);
    chunkParts.forEach((k, v) -> parts.merge(k, v, Double::sum));
  }

  /** Adds CPU seconds per group of threads (see {@link ThreadCpu}). */
  void addThreadCpu(Map<String, Double> groups) {
    groups.forEach((k, v) -> threadCpu.merge(k, v, Double::sum));
  }

  /** CPU seconds per group of threads, summed over the chunks. */
  Map<String, Double> threadCpu() {
    return threadCpu;
  }

  int examples() {
    return examples;
  }

  double seconds() {
    return seconds;
  }

  /** Examples per second over every chunk. */
  double rate() {
    return examples / seconds;
  }

  /** The named parts in seconds, summed over the chunks. */
  Map<String, Double> parts() {
    return parts;
  }

  /** Each chunk's examples per second, in order. */
  List<Double> chunkRates() {
    return chunkRates;
  }
}
