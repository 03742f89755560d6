package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.ParameterStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.TinyLm;

/**
 * The common part of runners over a {@link TinyLm}: splits a batch into micro-batches, gives each
 * its own native memory scope, and checks the assembled output.
 */
public abstract class MicroBatchedRunner implements ModelRunner {
  /** Longest sequence accepted by default (prompt, response and special tokens). */
  public static final int DEFAULT_MAX_SEQ_LEN = 512;

  protected final TinyLm lm;
  protected final int microBatch;
  protected final int maxSeqLen;

  protected MicroBatchedRunner(TinyLm lm, int microBatch, int maxSeqLen) {
    if (microBatch < 1) {
      throw new IllegalArgumentException("micro-batch " + microBatch + " invalid, expected >= 1");
    }
    if (maxSeqLen < 4) {
      throw new IllegalArgumentException("max_seq_len " + maxSeqLen + " invalid, expected >= 4");
    }
    this.lm = lm;
    this.microBatch = microBatch;
    this.maxSeqLen = maxSeqLen;
  }

  @Override
  public String weightsDigest() {
    return lm.weightsDigest();
  }

  @Override
  public Map<String, String> parameters() {
    Map<String, String> p = new LinkedHashMap<>(lm.config().asParameters());
    p.put("max_seq_len", Integer.toString(maxSeqLen));
    return p;
  }

  @Override
  public final RunnerOutput run(List<PreferenceExample> batch) {
    int fieldCount = fields().size();
    float[][][] values = new float[fieldCount][batch.size()][];
    long[] indices = new long[batch.size()];
    for (int from = 0; from < batch.size(); from += microBatch) {
      List<PreferenceExample> micro =
          batch.subList(from, Math.min(batch.size(), from + microBatch));
      float[][][] out;
      // PyTorch's grad mode is per thread and DJL turns it off only on the thread that started
      // the engine; with it on, other threads take other kernels and get other bits (and record
      // autograd graphs for nothing). A value must not depend on the thread that computes it.
      boolean grad = JniUtils.isGradMode();
      JniUtils.setGradMode(false);
      try (NDManager scope = lm.manager().newSubManager()) {
        out = forward(micro, scope, new ParameterStore(scope, false));
      } finally {
        JniUtils.setGradMode(grad);
      }
      for (int i = 0; i < micro.size(); i++) {
        indices[from + i] = micro.get(i).index();
        for (int f = 0; f < fieldCount; f++) {
          values[f][from + i] = out[f][i];
        }
      }
    }
    return RunnerOutput.validated(id(), fields(), indices, values);
  }

  /** Computes {@code [field][example][value]} for one micro-batch, in {@code scope}'s memory. */
  protected abstract float[][][] forward(
      List<PreferenceExample> micro, NDManager scope, ParameterStore ps);

  /** Splits a flat {@code rows * width} array into rows. */
  protected static float[][] rows(float[] flat, int from, int rows, int width) {
    float[][] out = new float[rows][];
    for (int r = 0; r < rows; r++) {
      out[r] = java.util.Arrays.copyOfRange(flat, (from + r) * width, (from + r + 1) * width);
    }
    return out;
  }

  @Override
  public void close() {
    lm.close();
  }
}
