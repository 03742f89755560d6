package org.tensorcache.model.train;

import java.util.ArrayList;
import java.util.List;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;

/**
 * Reference log-probs computed by the reference model for every lookup: the uncached baseline, an
 * extra forward pass of the reference model per training step.
 */
public final class ComputedReferenceLogprobs implements ReferenceLogprobs {
  private final ReferenceLogprobRunner runner;
  private final ExampleSet dataset;

  /** Computes with {@code runner} the values of the examples of {@code dataset}. */
  public ComputedReferenceLogprobs(ReferenceLogprobRunner runner, ExampleSet dataset) {
    this.runner = runner;
    this.dataset = dataset;
  }

  @Override
  public RefLogprobs lookup(long[] indices) {
    List<Example> batch = new ArrayList<>(indices.length);
    for (long index : indices) {
      batch.add(dataset.get(index));
    }
    RunnerOutput out = runner.run(batch);
    float[] chosen = new float[indices.length];
    float[] rejected = new float[indices.length];
    for (int i = 0; i < indices.length; i++) {
      chosen[i] = out.value("chosen_logp", i)[0];
      rejected[i] = out.value("rejected_logp", i)[0];
    }
    return new RefLogprobs(chosen, rejected);
  }
}
