package org.tensorcache.actors.cache;

import java.nio.file.Path;
import java.util.function.Supplier;
import org.tensorcache.model.data.PreferenceDataset;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Everything a node needs to compute, keep and serve one cache: its spec and fingerprint, the data
 * set the indices refer to, how to make a runner (one per compute thread), and where its segments
 * live.
 */
public record CacheDefinition(
    CacheSpec spec,
    Fingerprint fingerprint,
    PreferenceDataset data,
    Supplier<ModelRunner> runners,
    Path segmentDir,
    int microBatch) {

  /** Checks that the parts belong together. */
  public CacheDefinition {
    if (data.size() != spec.n()) {
      throw new IllegalArgumentException(
          "data set has "
              + data.size()
              + " examples, cache '"
              + spec.name()
              + "' expects "
              + spec.n());
    }
    fingerprint.checkBelongsTo(spec);
    if (microBatch < 1 || spec.rangeSize() % microBatch != 0) {
      throw new IllegalArgumentException(
          "micro-batch "
              + microBatch
              + " invalid, expected a divisor of the range size "
              + spec.rangeSize());
    }
  }

  /** The cache id, derived from the fingerprint. */
  public String cacheId() {
    return fingerprint.cacheId();
  }
}
