package org.tensorcache.bench.distill;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A teacher's top-K output for {@code tokens} tokens over a real vocabulary, drawn from a seed: per
 * token, Zipf-shaped probabilities over the ranks ({@code p(rank) ~ (rank + 1)^-s}, with {@code s}
 * drawn per token from 0.6 (spread over thousands of ids) to 3.6 (near certain), as a language
 * model's tokens range), a little noise on the top ranks, and the ranks given random distinct ids.
 * The tail is the exact mass of the ranks past K. Log-probs are float32, as a runner stores them.
 *
 * @param ids per token its K ids, in descending order of probability
 * @param logps per token the log-probs of those ids
 * @param tails per token the log of the mass outside its K ids
 */
record TeacherSample(int vocab, int k, int tokens, int[] ids, float[] logps, float[] tails) {
  /** The values of {@code s}, of which the mass of the ranks past each K is summed once. */
  private static final int SHAPES = 16;

  static TeacherSample draw(long seed, int vocab, int k, int tokens) {
    SplittableRandom random = new SplittableRandom(seed);
    double[] beyond = new double[SHAPES]; // the mass of the ranks past 2K, per shape
    for (int s = 0; s < SHAPES; s++) {
      for (int rank = vocab - 1; rank >= 2 * k; rank--) {
        beyond[s] += Math.pow(rank + 1, -shape(s));
      }
    }
    int[] ids = new int[tokens * k];
    float[] logps = new float[tokens * k];
    float[] tails = new float[tokens];
    double[] top = new double[2 * k];
    for (int t = 0; t < tokens; t++) {
      int s = random.nextInt(SHAPES);
      double shape = shape(s);
      double mass = beyond[s];
      for (int rank = 0; rank < 2 * k; rank++) {
        top[rank] = Math.pow(rank + 1, -shape) * Math.exp(0.2 * random.nextGaussian());
        mass += top[rank];
      }
      Arrays.sort(top);
      double outside = beyond[s];
      for (int j = 0; j < k; j++) {
        outside += top[j]; // the ascending sort put the 2K - K smallest first
      }
      int[] chosen = distinct(random, vocab, k);
      for (int j = 0; j < k; j++) {
        ids[t * k + j] = chosen[j];
        logps[t * k + j] = (float) Math.log(top[2 * k - 1 - j] / mass);
      }
      tails[t] = (float) Math.log(outside / mass);
    }
    return new TeacherSample(vocab, k, tokens, ids, logps, tails);
  }

  private static double shape(int s) {
    return 0.6 + 3.0 * s / (SHAPES - 1);
  }

  private static int[] distinct(SplittableRandom random, int vocab, int k) {
    int[] out = new int[k];
    for (int j = 0; j < k; ) {
      int id = random.nextInt(vocab);
      boolean seen = false;
      for (int i = 0; i < j && !seen; i++) {
        seen = out[i] == id;
      }
      if (!seen) {
        out[j++] = id;
      }
    }
    return out;
  }
}
