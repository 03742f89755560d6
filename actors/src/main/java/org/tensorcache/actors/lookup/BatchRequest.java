package org.tensorcache.actors.lookup;

import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.model.spec.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/** Checks of a lookup before anything is asked of the cluster. */
public final class BatchRequest {
  private BatchRequest() {}

  /** Throws an IllegalArgumentException naming the first bad part of the request. */
  public static void check(String cacheId, CacheSpec spec, long[] indices, NodeSettings settings) {
    checkSize(cacheId, indices, settings);
    for (long index : indices) {
      if (index < 0 || index >= spec.n()) {
        throw new IllegalArgumentException(
            String.format(
                "index %d out of range [0, %d) for cache '%s'", index, spec.n(), cacheId));
      }
    }
  }

  /** Checks the number of indices only; the gather checks each index as it reads it. */
  public static void checkSize(String cacheId, long[] indices, NodeSettings settings) {
    if (indices == null || indices.length == 0) {
      throw new IllegalArgumentException(
          "empty batch for cache '"
              + cacheId
              + "', expected 1.."
              + settings.maxBatch()
              + " indices");
    }
    if (indices.length > settings.maxBatch()) {
      throw new IllegalArgumentException(
          String.format(
              "batch of %d indices for cache '%s' is over the maximum %d",
              indices.length, cacheId, settings.maxBatch()));
    }
  }

  /** Bytes of one example's values, all fields. */
  public static int rowBytes(CacheSpec spec) {
    int bytes = 0;
    for (FieldSpec f : spec.fields()) {
      bytes += f.width() * f.dtype().bytes();
    }
    return bytes;
  }
}
