package org.tensorcache.model.train;

/**
 * The settings of a DPO run: {@code beta} scales the implicit reward, {@code learningRate} is
 * Adam's, {@code maxSeqLen} bounds a prompt and response in tokens.
 */
public record DpoConfig(float beta, float learningRate, int maxSeqLen) {
  /** DPO's usual beta, a learning rate that moves a tiny model in a few steps, 512 tokens. */
  public static final DpoConfig DEFAULTS = new DpoConfig(0.1f, 1e-3f, 512);

  /** Checks every setting, naming the bad one. */
  public DpoConfig {
    if (!(beta > 0) || Float.isInfinite(beta)) {
      throw new IllegalArgumentException("beta " + beta + " invalid, expected a finite value > 0");
    }
    if (!(learningRate > 0) || Float.isInfinite(learningRate)) {
      throw new IllegalArgumentException(
          "learning_rate " + learningRate + " invalid, expected a finite value > 0");
    }
    if (maxSeqLen < 4) {
      throw new IllegalArgumentException("max_seq_len " + maxSeqLen + " invalid, expected >= 4");
    }
  }

  /** These settings with another beta. */
  public DpoConfig withBeta(float newBeta) {
    return new DpoConfig(newBeta, learningRate, maxSeqLen);
  }

  /** These settings with another learning rate. */
  public DpoConfig withLearningRate(float newLearningRate) {
    return new DpoConfig(beta, newLearningRate, maxSeqLen);
  }
}
