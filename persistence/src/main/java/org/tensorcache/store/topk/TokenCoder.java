package org.tensorcache.store.topk;

import java.util.Arrays;

/**
 * One token at a time of a {@link TopKCodec} row: a Rice parameter (5 bits), the Rice-coded gaps
 * between the token's ids in ascending order, then the values in the same order and the tail's.
 * Compact values are an exponential Golomb order (3 bits) and each mass's level in that code; exact
 * values are the float32 bits. The arrays are reused from token to token.
 */
final class TokenCoder {
  private static final int RICE_BITS = 5;
  private static final int ORDER_BITS = 3;

  private final int vocab;
  private final int levels;
  private final boolean exact;
  private final long[] order;
  private final int[] sorted;
  private final int[] level;

  /** Per level, the mass it stands for and the log of that mass: decoding looks them up. */
  private final double[] masses;

  private final double[] logMasses;

  TokenCoder(int vocab, int k, int levels, boolean exact, double[][] tables) {
    this.vocab = vocab;
    this.levels = levels;
    this.exact = exact;
    this.masses = tables[0];
    this.logMasses = tables[1];
    order = new long[k];
    sorted = new int[k];
    level = new int[k + 1]; // the tail's last
  }

  /** Per level of {@code levels}, the mass it stands for and its log: the last argument above. */
  static double[][] tables(int levels) {
    double[] masses = new double[levels + 1];
    double[] logMasses = new double[levels + 1];
    for (int l = 0; l <= levels; l++) {
      double root = l == 0 ? 0.25 / levels : (double) l / levels; // level 0: a quarter step
      masses[l] = root * root;
      logMasses[l] = 2 * StrictMath.log(root);
    }
    return new double[][] {masses, logMasses};
  }

  /** Appends token {@code t} of the arrays (K entries from {@code t * K}), checked before. */
  void encode(int t, int[] ids, float[] logps, float tail, BitWriter out) {
    int k = order.length;
    for (int j = 0; j < k; j++) {
      order[j] = ((long) ids[t * k + j] << 32) | j;
    }
    Arrays.sort(order);
    long gapSum = 0;
    for (int j = 0; j < k; j++) {
      sorted[j] = (int) (order[j] >>> 32);
      if (j > 0 && sorted[j] == sorted[j - 1]) {
        throw new IllegalArgumentException(
            "token " + t + ": id " + sorted[j] + " twice, expected " + k + " distinct ids");
      }
      gapSum += gap(j);
    }
    int r = riceParameter(gapSum);
    out.write(r, RICE_BITS);
    for (int j = 0; j < k; j++) {
      out.rice(gap(j), r);
    }
    if (exact) {
      for (int j = 0; j < k; j++) {
        out.write(Float.floatToRawIntBits(logps[t * k + (int) order[j]]) & 0xffffffffL, 32);
      }
      out.write(Float.floatToRawIntBits(tail) & 0xffffffffL, 32);
      return;
    }
    for (int j = 0; j < k; j++) {
      level[j] = levelOf(logps[t * k + (int) order[j]]);
    }
    level[k] = levelOf(tail);
    int golomb = golombOrder();
    out.write(golomb, ORDER_BITS);
    for (int l : level) {
      out.expGolomb(l, golomb);
    }
  }

  /** Reads token {@code t} into the arrays: ids ascending, each with its log-prob. */
  void decode(BitReader in, int t, int[] ids, float[] logps, float[] tails) {
    int k = order.length;
    int r = (int) in.read(RICE_BITS);
    long id = -1;
    for (int j = t * k; j < (t + 1) * k; j++) {
      id += in.rice(r) + 1L;
      if (id >= vocab) {
        throw new IllegalArgumentException(
            "encoded id " + id + " is outside the vocabulary of " + vocab);
      }
      ids[j] = (int) id;
    }
    if (exact) {
      for (int j = t * k; j < (t + 1) * k; j++) {
        logps[j] = Float.intBitsToFloat((int) in.read(32));
      }
      tails[t] = Float.intBitsToFloat((int) in.read(32));
      return;
    }
    int golomb = (int) in.read(ORDER_BITS);
    double mass = 0;
    for (int j = 0; j <= k; j++) {
      level[j] = in.expGolomb(golomb);
      if (level[j] > levels) {
        throw new IllegalArgumentException(
            "encoded level " + level[j] + " is over the " + levels + " levels of the codec");
      }
      mass += masses[level[j]];
    }
    double logMass = StrictMath.log(mass); // the K + 1 masses decoded sum to one
    for (int j = 0; j < k; j++) {
      logps[t * k + j] = (float) (logMasses[level[j]] - logMass);
    }
    tails[t] = (float) (logMasses[level[k]] - logMass);
  }

  /** The gap before the j-th smallest id: the ids skipped since the one before. */
  private int gap(int j) {
    return j == 0 ? sorted[0] : sorted[j] - sorted[j - 1] - 1;
  }

  /** About log2 of the mean gap, the best Rice parameter of geometric gaps, then refined. */
  private int riceParameter(long gapSum) {
    long mean = Math.max(1, gapSum / order.length);
    int guess = 63 - Long.numberOfLeadingZeros(mean);
    int best = guess;
    long bestBits = Long.MAX_VALUE;
    for (int r = Math.max(0, guess - 1); r <= Math.min(30, guess + 1); r++) {
      long bits = 0;
      for (int j = 0; j < order.length; j++) {
        bits += (gap(j) >>> r) + 1 + r;
      }
      if (bits < bestBits) {
        best = r;
        bestBits = bits;
      }
    }
    return best;
  }

  /** The exponential Golomb order in [0, 7] that codes the levels in the fewest bits. */
  private int golombOrder() {
    int best = 0;
    long bestBits = Long.MAX_VALUE;
    for (int g = 0; g < 1 << ORDER_BITS; g++) {
      long bits = 0;
      for (int l : level) {
        bits += 2L * (63 - Long.numberOfLeadingZeros(l + (1L << g))) - g + 1;
      }
      if (bits < bestBits) {
        best = g;
        bestBits = bits;
      }
    }
    return best;
  }

  private int levelOf(float logp) {
    return (int) Math.min(levels, Math.round(StrictMath.exp(logp * 0.5) * levels));
  }
}
