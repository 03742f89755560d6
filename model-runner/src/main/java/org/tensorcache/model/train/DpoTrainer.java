package org.tensorcache.model.train;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.training.GradientCollector;
import ai.djl.training.ParameterStore;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.PaddedBatch;
import org.tensorcache.model.runner.ReferenceLogprobRunner;

/**
 * Trains a policy with DPO: the policy starts as an exact copy of the reference model, and each
 * step lowers {@code -mean(log sigmoid(beta * ((pi_c - ref_c) - (pi_r - ref_r))))} with Adam, where
 * {@code pi} and {@code ref} are the policy's and the reference's log-probs of the chosen and the
 * rejected response, counted exactly as {@link ReferenceLogprobRunner} counts them. The reference
 * values come from outside, so that a cache can serve them. Not thread-safe; on the CPU the same
 * reference model, config and batches give the same losses, up to the last bit, which threaded
 * kernels may round differently from run to run.
 */
public final class DpoTrainer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DpoTrainer.class);

  private final TinyLm policy;
  private final DpoConfig config;
  private final Optimizer optimizer;
  private long steps;

  /** A trainer whose policy starts with {@code reference}'s weights; the reference is unchanged. */
  public DpoTrainer(TinyLm reference, DpoConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.policy = reference.copy();
    for (Pair<String, Parameter> p : policy.block().getParameters()) {
      if (p.getValue().requiresGradient()) {
        p.getValue().getArray().setRequiresGradient(true);
      }
    }
    this.optimizer =
        Optimizer.adam().optLearningRateTracker(Tracker.fixed(config.learningRate())).build();
  }

  /** One step on {@code batch}, its reference log-probs looked up in {@code source}. */
  public StepResult step(List<PreferenceExample> batch, ReferenceLogprobs source) {
    return step(batch, source.lookup(indicesOf(batch)));
  }

  /**
   * One step on {@code batch} with its reference log-probs {@code ref} (one per example, in the
   * batch's order): forward, loss, backward and an Adam update of the policy. The result is
   * measured before the update.
   */
  public StepResult step(List<PreferenceExample> batch, RefLogprobs ref) {
    check(batch, ref);
    int b = batch.size();
    PaddedBatch padded = ReferenceLogprobRunner.pairBatch(batch, config.maxSeqLen());
    float loss;
    float[] margins;
    try (NDManager scope = policy.manager().newSubManager();
        GradientCollector collector = Engine.getEngine(TinyLm.ENGINE).newGradientCollector()) {
      ParameterStore ps = new ParameterStore(scope, false);
      NDArray logp = ReferenceLogprobRunner.sequenceLogprobs(policy, ps, padded, scope, true);
      NDArray chosen = logp.get("0:" + b).sub(scope.create(ref.chosen()));
      NDArray rejected = logp.get(b + ":").sub(scope.create(ref.rejected()));
      NDArray margin = chosen.sub(rejected).mul(config.beta());
      // -log sigmoid(x) = softplus(-x), which PyTorch computes without overflow for large |x|
      NDArray mean = Activation.softPlus(margin.neg()).mean();
      loss = mean.getFloat();
      if (!Float.isFinite(loss)) {
        // thrown before backward: no gradient is left behind and the policy is unchanged
        throw new IllegalStateException(
            "loss " + loss + " at step " + steps + " for examples " + indices(batch));
      }
      collector.backward(mean);
      margins = margin.toFloatArray();
    }
    update();
    StepResult result = new StepResult(steps++, loss, accuracy(margins), mean(margins));
    log.debug("{}", result);
    return result;
  }

  private void update() {
    for (Pair<String, Parameter> p : policy.block().getParameters()) {
      Parameter parameter = p.getValue();
      if (parameter.requiresGradient()) {
        NDArray weight = parameter.getArray();
        // a new handle on the gradient each call, owned by the weights' manager: close it here
        try (NDArray gradient = weight.getGradient()) {
          optimizer.update(parameter.getId(), weight, gradient);
        }
      }
    }
  }

  private static void check(List<PreferenceExample> batch, RefLogprobs ref) {
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("batch is empty, expected at least 1 example");
    }
    if (ref.size() != batch.size()) {
      throw new IllegalArgumentException(
          "reference log-probs for "
              + ref.size()
              + " examples, but the batch has "
              + batch.size()
              + " examples");
    }
    for (int i = 0; i < ref.size(); i++) {
      finite("chosen", ref.chosen()[i], i, batch.get(i));
      finite("rejected", ref.rejected()[i], i, batch.get(i));
    }
  }

  private static void finite(String field, float value, int position, PreferenceExample example) {
    if (!Float.isFinite(value)) {
      throw new IllegalArgumentException(
          String.format(
              "reference %s log-prob %s at position %d (example %d), expected a finite value",
              field, value, position, example.index()));
    }
  }

  private static long[] indicesOf(List<PreferenceExample> batch) {
    long[] indices = new long[batch.size()];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = batch.get(i).index();
    }
    return indices;
  }

  private static String indices(List<PreferenceExample> batch) {
    return Arrays.toString(indicesOf(batch));
  }

  private static float accuracy(float[] margins) {
    int better = 0;
    for (float m : margins) {
      better += m > 0 ? 1 : 0;
    }
    return (float) better / margins.length;
  }

  private static float mean(float[] values) {
    double sum = 0;
    for (float v : values) {
      sum += v;
    }
    return (float) (sum / values.length);
  }

  /** The policy being trained; closed with the trainer. */
  public TinyLm policy() {
    return policy;
  }

  /** The settings. */
  public DpoConfig config() {
    return config;
  }

  /** Number of steps done. */
  public long steps() {
    return steps;
  }

  /** Releases the policy's native memory. */
  @Override
  public void close() {
    policy.close();
  }
}
