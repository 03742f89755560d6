package org.tensorcache.model.train;

/**
 * The reference model's log-probs of the chosen and the rejected response, one per example of a
 * batch, in the batch's order.
 */
public record RefLogprobs(float[] chosen, float[] rejected) {
  /** Checks that both arrays exist and have one value per example. */
  public RefLogprobs {
    if (chosen == null || rejected == null) {
      throw new IllegalArgumentException(
          "reference log-probs need both arrays, got chosen "
              + (chosen == null ? "null" : chosen.length + " values")
              + " and rejected "
              + (rejected == null ? "null" : rejected.length + " values"));
    }
    if (chosen.length != rejected.length) {
      throw new IllegalArgumentException(
          "reference log-probs have "
              + chosen.length
              + " chosen and "
              + rejected.length
              + " rejected values, expected as many of each");
    }
  }

  /** Number of examples. */
  public int size() {
    return chosen.length;
  }
}
