package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.spec.FieldSpec;

/**
 * Frozen features from a user's traced encoder: the mean of its last hidden states over the row's
 * tokens (attention mask 1, special tokens included), field {@code embedding} of the hidden size.
 */
public final class EncoderMeanRunner extends MicroBatchedRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "encoder-mean";

  private final TorchScriptModel model;
  private final String weightsDigest;
  private final Map<String, String> parameters;
  private final int padId;
  private final List<FieldSpec> fields;

  /** A runner over a shared loaded {@code model} that returns hidden states. */
  public EncoderMeanRunner(
      TorchScriptModel model,
      String weightsDigest,
      Map<String, String> parameters,
      int padId,
      int microBatch) {
    super(microBatch);
    this.model = model;
    this.weightsDigest = weightsDigest;
    this.parameters = Map.copyOf(parameters);
    this.padId = Math.max(0, padId);
    this.fields = List.of(FieldSpec.vector("embedding", model.width()));
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String version() {
    return "1";
  }

  @Override
  public List<FieldSpec> fields() {
    return fields;
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

  @Override
  protected float[][][] forward(List<? extends Example> micro, NDManager scope) {
    List<int[]> ids = new ArrayList<>(micro.size());
    for (Example e : micro) {
      ids.add(Example.as(TokenizedDocument.class, e, ID).ids());
    }
    TokenRows in = TokenRows.of(ids, padId);
    NDArray hidden = model.forward(scope, in.ids(), in.mask(), in.rows(), in.steps());
    float[] maskValues = new float[in.mask().length];
    for (int i = 0; i < maskValues.length; i++) {
      maskValues[i] = in.mask()[i];
    }
    NDArray mask = scope.create(maskValues, new Shape(in.rows(), in.steps()));
    NDArray mean =
        hidden
            .mul(mask.expandDims(-1))
            .sum(new int[] {1})
            .div(mask.sum(new int[] {1}).expandDims(-1));
    return new float[][][] {rows(mean.toFloatArray(), 0, micro.size(), model.width())};
  }

  /** The shared model is closed by its owner, not by each runner. */
  @Override
  public void close() {}
}
