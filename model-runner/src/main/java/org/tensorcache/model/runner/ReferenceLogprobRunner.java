package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.ParameterStore;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.text.ByteTokenizer;

/**
 * The DPO reference log-probs: for the chosen and the rejected response, the sum over the response
 * tokens (EOS included) of log p(token | prompt and the response tokens before it), prompt and
 * padding masked out, as open-instruct's reference cache computes them.
 */
public final class ReferenceLogprobRunner extends TinyLmRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "reference-logprob";

  private static final String VERSION = "1";

  private static final List<FieldSpec> FIELDS =
      List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));

  /** A runner over {@code lm}, at most {@code microBatch} examples per forward pass. */
  public ReferenceLogprobRunner(TinyLm lm, int microBatch, int maxSeqLen) {
    super(lm, microBatch, maxSeqLen);
  }

  /**
   * What a runner over the saved model of {@code config} whose weights digest to {@code
   * weightsDigest}, reading at most {@code maxSeqLen} tokens, computes: known without loading it.
   */
  public static RunnerIdentity identity(LmConfig config, String weightsDigest, int maxSeqLen) {
    return new RunnerIdentity(ID, VERSION, weightsDigest, parameters(config, maxSeqLen), FIELDS);
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String version() {
    return VERSION;
  }

  @Override
  public List<FieldSpec> fields() {
    return FIELDS;
  }

  @Override
  protected float[][][] forward(List<? extends Example> micro, NDManager scope) {
    ParameterStore ps = new ParameterStore(scope, false);
    int b = micro.size();
    PaddedBatch batch = pairBatch(micro, maxSeqLen);
    float[] sums = sequenceLogprobs(lm, ps, batch, scope, false).toFloatArray();
    return new float[][][] {rows(sums, 0, b, 1), rows(sums, b, b, 1)};
  }

  /**
   * The padded, response-masked sequences of a batch: rows {@code [0, b)} are {@code prompt +
   * chosen}, rows {@code [b, 2b)} are {@code prompt + rejected}, in the batch's order.
   */
  public static PaddedBatch pairBatch(List<? extends Example> batch, int maxSeqLen) {
    int b = batch.size();
    List<ByteTokenizer.Pair> sequences = new ArrayList<>(2 * b);
    long[] ids = new long[2 * b];
    for (int i = 0; i < b; i++) {
      PreferenceExample e = Example.as(PreferenceExample.class, batch.get(i), ID);
      sequences.add(ByteTokenizer.encodePair(e.prompt(), e.chosen()));
      ids[i] = e.index();
    }
    for (int i = 0; i < b; i++) {
      PreferenceExample e = Example.as(PreferenceExample.class, batch.get(i), ID);
      sequences.add(ByteTokenizer.encodePair(e.prompt(), e.rejected()));
      ids[b + i] = e.index();
    }
    return PaddedBatch.of(sequences, ids, maxSeqLen, true);
  }

  /**
   * Per sequence, the masked sum of the targets' log-probs, shape {@code (rows)}; with {@code
   * training} inside a gradient collector it is differentiable in the model's parameters.
   */
  public static NDArray sequenceLogprobs(
      TinyLm lm, ParameterStore ps, PaddedBatch batch, NDManager scope, boolean training) {
    NDArray hidden = lm.hidden(ps, batch.inputs(scope), training);
    NDArray logp = lm.logits(ps, hidden, training).logSoftmax(-1);
    NDArray picked = logp.gather(batch.targets(scope).expandDims(-1), -1).squeeze(-1);
    return picked.mul(batch.mask(scope)).sum(new int[] {1});
  }
}
