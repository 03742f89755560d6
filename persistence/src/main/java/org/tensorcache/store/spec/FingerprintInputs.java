package org.tensorcache.store.spec;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything that determines a cache's values; its {@link Fingerprint} is a hash of exactly these.
 *
 * @param runnerId which runner computes the values, e.g. {@code reference-logprob}
 * @param runnerVersion the runner's version; a change in how values are computed bumps it
 * @param weightsDigest digest of the model weights
 * @param datasetDigest digest of the dataset, which fixes what each example index means
 * @param runnerParameters further parameters of the runner; kept sorted by key, so the order of the
 *     given map never matters
 * @param spec the cache's shape: name, n, range size and fields
 */
public record FingerprintInputs(
    String runnerId,
    String runnerVersion,
    String weightsDigest,
    String datasetDigest,
    Map<String, String> runnerParameters,
    CacheSpec spec) {

  /** Rejects missing values and takes a sorted, unmodifiable copy of the parameters. */
  public FingerprintInputs {
    requireText("runner id", runnerId);
    requireText("runner version", runnerVersion);
    requireText("weights digest", weightsDigest);
    requireText("dataset digest", datasetDigest);
    if (runnerParameters == null) {
      throw new IllegalArgumentException(
          "runner parameters missing, expected a (possibly empty) map");
    }
    TreeMap<String, String> sorted = new TreeMap<>();
    runnerParameters.forEach(
        (k, v) -> {
          if (k == null || v == null) {
            throw new IllegalArgumentException(
                "runner parameter " + k + "=" + v + " invalid, expected non-null key and value");
          }
          sorted.put(k, v);
        });
    runnerParameters = Collections.unmodifiableSortedMap(sorted);
    if (spec == null) {
      throw new IllegalArgumentException("cache spec missing");
    }
  }

  private static void requireText(String what, String value) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(
          what + " '" + value + "' invalid, expected non-empty text");
    }
  }
}
