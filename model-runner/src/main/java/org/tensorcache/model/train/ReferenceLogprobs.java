package org.tensorcache.model.train;

/**
 * A source of the reference model's log-probs for a batch of example indices: computed by the
 * reference model each time, or looked up in a cache filled once.
 */
public interface ReferenceLogprobs {
  /** The log-probs of the examples {@code indices}, in that order. */
  RefLogprobs lookup(long[] indices);
}
