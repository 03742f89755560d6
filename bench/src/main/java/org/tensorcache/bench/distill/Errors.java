package org.tensorcache.bench.distill;

import java.util.Arrays;

/**
 * What the compact form loses, per token: the KL divergence of the decoded top-K-plus-tail
 * distribution from the exact one (in nats), and the absolute error of each log-prob, over every
 * entry and over those of probability above 1%, the entries a distillation loss weighs most.
 */
record Errors(double klMean, double klMax, double maxLargeError, double maxError) {
  static Errors of(TeacherSample exact, TeacherSample decoded) {
    int k = exact.k();
    double klSum = 0;
    double klMax = 0;
    double large = 0;
    double any = 0;
    long[] byId = new long[k];
    for (int t = 0; t < exact.tokens(); t++) {
      for (int j = 0; j < k; j++) {
        byId[j] = ((long) exact.ids()[t * k + j] << 32) | j; // decoded ids come ascending
      }
      Arrays.sort(byId);
      double kl = 0;
      for (int j = 0; j < k; j++) {
        int at = t * k + (int) byId[j];
        if (decoded.ids()[t * k + j] != exact.ids()[at]) {
          throw new IllegalStateException(
              "token "
                  + t
                  + ": decoded id "
                  + decoded.ids()[t * k + j]
                  + ", expected "
                  + exact.ids()[at]);
        }
        double p = exact.logps()[at];
        double q = decoded.logps()[t * k + j];
        kl += Math.exp(p) * (p - q);
        any = Math.max(any, Math.abs(p - q));
        if (p > Math.log(0.01)) {
          large = Math.max(large, Math.abs(p - q));
        }
      }
      double tail = exact.tails()[t];
      kl += Math.exp(tail) * (tail - decoded.tails()[t]);
      klSum += kl;
      klMax = Math.max(klMax, kl);
    }
    return new Errors(klSum / exact.tokens(), klMax, large, any);
  }
}
