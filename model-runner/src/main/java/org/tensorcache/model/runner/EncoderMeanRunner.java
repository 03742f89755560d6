package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.hf.TorchScriptModel;

/**
 * Frozen features from a user's traced encoder: the mean of its last hidden states over the row's
 * tokens (attention mask 1, special tokens included), field {@code embedding} of the hidden size.
 * Rows are sorted by length and packed into forward passes under the token budget.
 */
public final class EncoderMeanRunner extends TorchScriptRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "encoder-mean";

  private final TorchScriptModel model;
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
      TokenBudget budget,
      DType dtype) {
    super(model.manager(), weightsDigest, parameters, padId, budget);
    this.model = model;
    this.fields = fields(dtype, model.width());
  }

  /** The field of an embedding {@code width} wide stored as {@code dtype}. */
  public static List<FieldSpec> fields(DType dtype, int width) {
    return List.of(new FieldSpec("embedding", floating(dtype), new int[] {width}));
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
  public RunnerOutput run(List<? extends Example> batch) {
    int b = batch.size();
    long[] indices = new long[b];
    int[] lengths = new int[b];
    for (int i = 0; i < b; i++) {
      indices[i] = batch.get(i).index();
      lengths[i] = Example.as(TokenizedDocument.class, batch.get(i), ID).ids().length;
    }
    float[][] embeddings = new float[b][];
    for (int[] members : budget.passes(lengths, indices)) {
      List<int[]> ids = new ArrayList<>(members.length);
      for (int i : members) {
        ids.add(((TokenizedDocument) batch.get(i)).ids());
      }
      float[][] means = inScope(scope -> means(ids, scope));
      for (int k = 0; k < members.length; k++) {
        embeddings[members[k]] = means[k];
      }
    }
    return RunnerOutput.validated(ID, fields, indices, new float[][][] {embeddings});
  }

  private float[][] means(List<int[]> ids, NDManager scope) {
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
    return MicroBatchedRunner.rows(mean.toFloatArray(), 0, ids.size(), model.width());
  }
}
