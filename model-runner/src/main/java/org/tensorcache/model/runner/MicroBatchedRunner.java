package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import java.util.List;
import org.tensorcache.model.data.Example;

/**
 * The common part of runners on DJL: splits a batch into micro-batches, gives each its own native
 * memory scope with gradients off, and checks the assembled output.
 */
public abstract class MicroBatchedRunner implements ModelRunner {
  /** Longest sequence accepted by default (prompt, response and special tokens). */
  public static final int DEFAULT_MAX_SEQ_LEN = 512;

  protected final int microBatch;

  protected MicroBatchedRunner(int microBatch) {
    if (microBatch < 1) {
      throw new IllegalArgumentException("micro-batch " + microBatch + " invalid, expected >= 1");
    }
    this.microBatch = microBatch;
  }

  @Override
  public final RunnerOutput run(List<? extends Example> batch) {
    int fieldCount = fields().size();
    float[][][] values = new float[fieldCount][batch.size()][];
    long[] indices = new long[batch.size()];
    for (int from = 0; from < batch.size(); from += microBatch) {
      List<? extends Example> micro =
          batch.subList(from, Math.min(batch.size(), from + microBatch));
      float[][][] out = NoGrad.run(manager(), scope -> forward(micro, scope));
      for (int i = 0; i < micro.size(); i++) {
        indices[from + i] = micro.get(i).index();
        for (int f = 0; f < fieldCount; f++) {
          values[f][from + i] = out[f][i];
        }
      }
    }
    return RunnerOutput.validated(id(), fields(), indices, values);
  }

  /** The manager whose sub-scopes hold each micro-batch's native memory. */
  protected abstract NDManager manager();

  /** Computes {@code [field][example][value]} for one micro-batch, in {@code scope}'s memory. */
  protected abstract float[][][] forward(List<? extends Example> micro, NDManager scope);

  /** Splits a flat {@code rows * width} array into rows. */
  protected static float[][] rows(float[] flat, int from, int rows, int width) {
    float[][] out = new float[rows][];
    for (int r = 0; r < rows; r++) {
      out[r] = java.util.Arrays.copyOfRange(flat, (from + r) * width, (from + r + 1) * width);
    }
    return out;
  }
}
