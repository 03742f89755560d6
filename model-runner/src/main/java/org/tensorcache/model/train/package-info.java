/**
 * A DPO trainer over {@link org.tensorcache.model.lm.TinyLm} that takes the reference model's
 * log-probs from a {@link org.tensorcache.model.train.ReferenceLogprobs} source, so that a cache
 * can serve them instead of a forward pass of the reference model each step.
 */
package org.tensorcache.model.train;
