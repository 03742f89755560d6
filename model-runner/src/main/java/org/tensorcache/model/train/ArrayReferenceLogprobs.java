package org.tensorcache.model.train;

/**
 * Reference log-probs held in two arrays indexed by example index, computed once before training:
 * the in-memory form of what a cache serves.
 */
public final class ArrayReferenceLogprobs implements ReferenceLogprobs {
  private final float[] chosen;
  private final float[] rejected;

  /** Holds {@code chosen[i]} and {@code rejected[i]} as the values of example {@code i}. */
  public ArrayReferenceLogprobs(float[] chosen, float[] rejected) {
    RefLogprobs all = new RefLogprobs(chosen, rejected);
    this.chosen = all.chosen().clone();
    this.rejected = all.rejected().clone();
  }

  @Override
  public RefLogprobs lookup(long[] indices) {
    float[] c = new float[indices.length];
    float[] r = new float[indices.length];
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (index < 0 || index >= chosen.length) {
        throw new IndexOutOfBoundsException(
            "index "
                + index
                + " out of range [0, "
                + chosen.length
                + ") of the reference log-probs");
      }
      c[i] = chosen[(int) index];
      r[i] = rejected[(int) index];
    }
    return new RefLogprobs(c, r);
  }
}
