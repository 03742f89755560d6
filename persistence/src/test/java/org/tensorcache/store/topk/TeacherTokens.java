package org.tensorcache.store.topk;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The top-K of a teacher-like next-token distribution per token: Zipf-shaped logits over the whole
 * vocabulary at a temperature drawn per token, so that some tokens are near certain and others
 * spread over hundreds of ids, as a language model's are.
 */
public record TeacherTokens(int k, int[] ids, float[] logps, float[] tails) {
  public static TeacherTokens sample(long seed, int tokens, int vocab, int k) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] ids = new int[tokens * k];
    float[] logps = new float[tokens * k];
    float[] tails = new float[tokens];
    double[] logits = new double[vocab];
    int[] permutation = new int[vocab];
    for (int t = 0; t < tokens; t++) {
      for (int v = 0; v < vocab; v++) {
        permutation[v] = v;
      }
      for (int v = vocab - 1; v > 0; v--) {
        int w = random.nextInt(v + 1);
        int swap = permutation[v];
        permutation[v] = permutation[w];
        permutation[w] = swap;
      }
      double sharpness = 0.5 + 3 * random.nextDouble();
      for (int rank = 0; rank < vocab; rank++) {
        logits[permutation[rank]] = -sharpness * Math.log(rank + 1) + 0.3 * random.nextGaussian();
      }
      double max = Arrays.stream(logits).max().orElseThrow();
      double sum = 0;
      for (double l : logits) {
        sum += Math.exp(l - max);
      }
      double lse = max + Math.log(sum);
      Integer[] byLogit = new Integer[vocab];
      for (int v = 0; v < vocab; v++) {
        byLogit[v] = v;
      }
      Arrays.sort(byLogit, (a, b) -> Double.compare(logits[b], logits[a]));
      double top = 0;
      for (int j = 0; j < k; j++) {
        ids[t * k + j] = byLogit[j];
        logps[t * k + j] = (float) (logits[byLogit[j]] - lse);
        top += Math.exp(logits[byLogit[j]] - lse);
      }
      tails[t] = (float) Math.log(Math.max(0, 1 - top));
    }
    return new TeacherTokens(k, ids, logps, tails);
  }

  /** The same tokens with each token's entries in ascending id order. */
  TeacherTokens byId() {
    int[] sortedIds = ids.clone();
    float[] sortedLogps = logps.clone();
    for (int t = 0; t < tails.length; t++) {
      long[] order = new long[k];
      for (int j = 0; j < k; j++) {
        order[j] = ((long) ids[t * k + j] << 32) | j;
      }
      Arrays.sort(order);
      for (int j = 0; j < k; j++) {
        sortedIds[t * k + j] = (int) (order[j] >>> 32);
        sortedLogps[t * k + j] = logps[t * k + (int) order[j]];
      }
    }
    return new TeacherTokens(k, sortedIds, sortedLogps, tails);
  }

  /** KL(this || other) at token t over the K ids and the tail; other holds the same ids. */
  double klTo(int t, TeacherTokens other) {
    double kl = 0;
    for (int j = t * k; j < (t + 1) * k; j++) {
      int at = t * k;
      while (other.ids[at] != ids[j]) {
        at++;
      }
      kl += Math.exp(logps[j]) * (logps[j] - other.logps[at]);
    }
    return kl + Math.exp(tails[t]) * (tails[t] - other.tails[t]);
  }

  /** log of the sum of the K masses and the tail at token t. */
  double logSumExp(int t) {
    double sum = Math.exp(tails[t]);
    for (int j = t * k; j < (t + 1) * k; j++) {
      sum += Math.exp(logps[j]);
    }
    return Math.log(sum);
  }
}
