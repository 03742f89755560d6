package org.tensorcache.actors.client;

import org.tensorcache.store.spec.CacheSpec;

/** The values of a batch of indices: per field, {@code indices.length * width} floats. */
public record Batch(CacheSpec spec, long[] indices, float[][] values) {
  /** The flat values of the named field, in request order. */
  public float[] field(String name) {
    return values[spec.fieldIndex(name)];
  }
}
