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
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.spec.FieldSpec;

/**
 * Frozen features from a user's traced encoder: the mean of its last hidden states over the row's
 * tokens (attention mask 1, special tokens included), field {@code embedding} of the hidden size.
 */
public final class EncoderMeanRunner extends TorchScriptRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "encoder-mean";

  private final List<FieldSpec> fields;

  /**
   * A runner over a shared loaded {@code model} that returns hidden states, stored as {@code dtype}
   * (F32, or F16 or BF16 rounded to nearest even).
   */
  public EncoderMeanRunner(
      TorchScriptModel model,
      String weightsDigest,
      Map<String, String> parameters,
      int padId,
      int microBatch,
      DType dtype) {
    super(model, weightsDigest, parameters, padId, microBatch);
    this.fields = List.of(new FieldSpec("embedding", floating(dtype), new int[] {model.width()}));
  }

  /** {@code dtype} when it is a floating type, else an error naming it. */
  static DType floating(DType dtype) {
    if (dtype == null || !dtype.isFloating()) {
      throw new IllegalArgumentException(
          "dtype " + dtype + " for an embedding, expected F32, F16 or BF16");
    }
    return dtype;
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public List<FieldSpec> fields() {
    return fields;
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
}
