package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import java.util.Map;
import org.tensorcache.model.hf.TorchScriptModel;

/**
 * The common part of runners over a user's traced model: one loaded model shared by every runner of
 * the process (each compute thread has its runner), its weights' digest and the parameters that
 * decide the values besides it.
 */
public abstract class TorchScriptRunner extends MicroBatchedRunner {
  protected final TorchScriptModel model;
  protected final int padId;
  private final String weightsDigest;
  private final Map<String, String> parameters;

  protected TorchScriptRunner(
      TorchScriptModel model,
      String weightsDigest,
      Map<String, String> parameters,
      int padId,
      int microBatch) {
    super(microBatch);
    this.model = model;
    this.weightsDigest = weightsDigest;
    this.parameters = Map.copyOf(parameters);
    // the pad id only fills positions the mask hides; a model without one pads with 0
    this.padId = Math.max(0, padId);
  }

  @Override
  public String version() {
    return "1";
  }

  @Override
  public String weightsDigest() {
    return weightsDigest;
  }

  @Override
  public Map<String, String> parameters() {
    return parameters;
  }

  @Override
  protected NDManager manager() {
    return model.manager();
  }

  /** The shared model is closed by its owner, not by each runner. */
  @Override
  public void close() {}
}
