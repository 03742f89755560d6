package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.ParameterStore;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.text.ByteTokenizer;

/**
 * A frozen-feature runner: the mean of the last layer's hidden state over the input positions of
 * {@code BOS prompt SEP chosen}, a vector of the model's hidden size per example.
 */
public final class HiddenMeanRunner extends TinyLmRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "hidden-mean";

  private final List<FieldSpec> fields;

  /** A runner over {@code lm}, at most {@code microBatch} examples per forward pass. */
  public HiddenMeanRunner(TinyLm lm, int microBatch, int maxSeqLen) {
    this(lm, microBatch, maxSeqLen, DType.F32);
  }

  /** Like {@link #HiddenMeanRunner(TinyLm, int, int)}, stored as {@code dtype}. */
  public HiddenMeanRunner(TinyLm lm, int microBatch, int maxSeqLen, DType dtype) {
    super(lm, microBatch, maxSeqLen);
    int width = lm.config().hiddenSize();
    this.fields =
        List.of(
            new FieldSpec(
                "chosen_hidden_mean", EncoderMeanRunner.floating(dtype), new int[] {width}));
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
  protected float[][][] forward(List<? extends Example> micro, NDManager scope) {
    ParameterStore ps = new ParameterStore(scope, false);
    List<ByteTokenizer.Pair> sequences = new ArrayList<>(micro.size());
    long[] ids = new long[micro.size()];
    for (int i = 0; i < micro.size(); i++) {
      PreferenceExample e = Example.as(PreferenceExample.class, micro.get(i), ID);
      sequences.add(ByteTokenizer.encodePair(e.prompt(), e.chosen()));
      ids[i] = e.index();
    }
    PaddedBatch batch = PaddedBatch.of(sequences, ids, maxSeqLen, false);
    NDArray mask = batch.mask(scope);
    NDArray hidden = lm.hidden(ps, batch.inputs(scope), false);
    NDArray summed = hidden.mul(mask.expandDims(-1)).sum(new int[] {1});
    NDArray mean = summed.div(mask.sum(new int[] {1}).expandDims(-1));
    int width = lm.config().hiddenSize();
    return new float[][][] {rows(mean.toFloatArray(), 0, micro.size(), width)};
  }
}
