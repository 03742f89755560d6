package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import java.util.Map;
import java.util.function.Function;
import org.tensorcache.model.batch.TokenBudget;

/**
 * The common part of runners over a user's traced model: one loaded model shared by every runner of
 * the process (each compute thread has its runner), its weights' digest, the parameters that decide
 * the values besides it, and the token budget its forward passes are packed under.
 */
public abstract class TorchScriptRunner implements ModelRunner {
  protected final int padId;
  protected final TokenBudget budget;
  private final NDManager manager;
  private final String weightsDigest;
  private final Map<String, String> parameters;

  protected TorchScriptRunner(
      NDManager manager,
      String weightsDigest,
      Map<String, String> parameters,
      int padId,
      TokenBudget budget) {
    this.manager = manager;
    this.weightsDigest = weightsDigest;
    this.parameters = Map.copyOf(parameters);
    // the pad id only fills positions the mask hides; a model without one pads with 0
    this.padId = Math.max(0, padId);
    this.budget = budget;
  }

  /** Values are computed in passes packed by tokens (version 1 packed a fixed number of rows). */
  public static final String VERSION = "2";

  @Override
  public String version() {
    return VERSION;
  }

  @Override
  public String weightsDigest() {
    return weightsDigest;
  }

  @Override
  public Map<String, String> parameters() {
    return parameters;
  }

  /** The budget forward passes are packed under. */
  public TokenBudget budget() {
    return budget;
  }

  /** Runs one forward pass's native work with gradients off, in a scope freed after it. */
  protected <T> T inScope(Function<NDManager, T> work) {
    return NoGrad.run(manager, work);
  }

  /** The shared model is closed by its owner, not by each runner. */
  @Override
  public void close() {}
}
