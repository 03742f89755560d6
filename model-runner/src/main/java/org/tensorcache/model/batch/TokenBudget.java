package org.tensorcache.model.batch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * How many padded tokens one forward pass may hold ({@code batchTokens}) and how much working
 * memory it may take ({@code memoryBound} bytes, beyond the weights, as {@link MemoryModel}
 * estimates it). Sequences are sorted by length and packed into passes that keep both; one that
 * fits neither alone still goes alone if the memory bound allows it, and is refused before any
 * compute if not.
 */
public record TokenBudget(int batchTokens, long memoryBound, MemoryModel memory) {
  /** Padded tokens per forward pass by default (measured best on CPU by the byo benchmark). */
  public static final int DEFAULT_BATCH_TOKENS = 4096;

  /** Working memory of a forward pass by default. */
  public static final long DEFAULT_MEMORY_BOUND = 2L << 30;

  /**
   * Sequences are padded to a multiple of this many tokens: PyTorch prepares its kernels for every
   * new input shape, and a causal model's values at real positions do not depend on right padding.
   */
  public static final int STEP_MULTIPLE = 8;

  /** Checks the settings. */
  public TokenBudget {
    if (batchTokens < STEP_MULTIPLE) {
      throw new IllegalArgumentException(
          "batch tokens " + batchTokens + " invalid, expected >= " + STEP_MULTIPLE);
    }
    if (memoryBound < (1L << 20)) {
      throw new IllegalArgumentException(
          "memory bound " + memoryBound + " bytes invalid, expected at least 1 MiB");
    }
  }

  /** The padded length of a pass whose longest sequence has {@code longest} tokens. */
  public static int steps(int longest) {
    return (Math.max(1, longest) + STEP_MULTIPLE - 1) / STEP_MULTIPLE * STEP_MULTIPLE;
  }

  /** Whether {@code rows} sequences padded to {@code steps} make an allowed pass. */
  public boolean fits(int rows, int steps) {
    return (long) rows * steps <= batchTokens && memory.passBytes(rows, steps) <= memoryBound;
  }

  /** Bytes a pass of this one sequence alone needs. */
  public long aloneBytes(int length) {
    return memory.passBytes(1, steps(length));
  }

  /**
   * The forward passes of sequences of {@code lengths}, as positions in {@code lengths}: ordered by
   * length, ties by {@code keys}, packed greedily while {@link #fits}; a sequence that fits nowhere
   * goes alone. A pure function of its arguments.
   */
  public List<int[]> passes(int[] lengths, long[] keys) {
    Integer[] order = new Integer[lengths.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(
        order, Comparator.<Integer>comparingInt(i -> lengths[i]).thenComparingLong(i -> keys[i]));
    List<int[]> passes = new ArrayList<>();
    int from = 0;
    for (int i = 1; i <= order.length; i++) {
      // sorted ascending: the pass [from, i] is padded to the length of order[i]
      if (i == order.length || !fits(i - from + 1, steps(lengths[order[i]]))) {
        int[] pass = new int[i - from];
        for (int k = from; k < i; k++) {
          pass[k - from] = order[k];
        }
        passes.add(pass);
        from = i;
      }
    }
    return passes;
  }

  /** Positions per call of the output head in a pass of {@code rows x steps}. */
  public int headChunk(int rows, int steps, int positions) {
    return memory.headChunk(rows, steps, positions, memoryBound);
  }

  /** The settings, as the fill prints them. */
  public String describe() {
    return String.format(
        Locale.ROOT, "%d tokens per forward pass, memory bound %s", batchTokens, mib(memoryBound));
  }

  /** {@code bytes} in MiB, for messages. */
  public static String mib(long bytes) {
    return String.format(Locale.ROOT, "%,d MiB", (bytes + (1L << 20) - 1) >> 20);
  }
}
