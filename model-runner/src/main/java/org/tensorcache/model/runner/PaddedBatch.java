package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.List;
import org.tensorcache.model.text.ByteTokenizer;

/**
 * Sequences padded on the right to one length, as model inputs, next-token targets and a mask of
 * the target positions that count (response tokens, or every real token). Shared by the runners and
 * the DPO trainer so that both count exactly the same tokens.
 */
public record PaddedBatch(long[] inputs, long[] targets, float[] mask, int rows, int steps) {
  /** Sequence lengths are padded up to a multiple of this. */
  public static final int STEP_MULTIPLE = 16;

  /**
   * Builds the batch; {@code responseOnly} masks prompt tokens out of the targets. {@code ids}
   * names the example of each sequence in errors.
   */
  public static PaddedBatch of(
      List<ByteTokenizer.Pair> sequences, long[] ids, int maxSeqLen, boolean responseOnly) {
    int steps = 1;
    for (int s = 0; s < sequences.size(); s++) {
      int length = sequences.get(s).length();
      if (length > maxSeqLen) {
        throw new IllegalArgumentException(
            String.format(
                "example %d has %d tokens, more than max_seq_len %d", ids[s], length, maxSeqLen));
      }
      steps = Math.max(steps, length - 1);
    }
    // PyTorch prepares its kernels per input shape, so every new length costs a warm-up; rounding
    // up to a multiple keeps the shapes few (the demo's fill went from 17.5 s to 7.8 s). The model
    // is causal and padding is masked, so the values at real positions do not change.
    steps = (steps + STEP_MULTIPLE - 1) / STEP_MULTIPLE * STEP_MULTIPLE;
    int rows = sequences.size();
    long[] inputs = new long[rows * steps];
    long[] targets = new long[rows * steps];
    float[] mask = new float[rows * steps];
    java.util.Arrays.fill(inputs, ByteTokenizer.PAD);
    java.util.Arrays.fill(targets, ByteTokenizer.PAD);
    for (int s = 0; s < rows; s++) {
      ByteTokenizer.Pair pair = sequences.get(s);
      int[] tokens = pair.tokens();
      int first = responseOnly ? pair.responseStart() : 1;
      for (int t = 0; t < tokens.length - 1; t++) {
        inputs[s * steps + t] = tokens[t];
        targets[s * steps + t] = tokens[t + 1];
        mask[s * steps + t] = t + 1 >= first ? 1f : 0f;
      }
    }
    return new PaddedBatch(inputs, targets, mask, rows, steps);
  }

  /** The inputs {@code (rows, steps)} as token ids in {@code manager}'s memory. */
  public NDArray inputs(NDManager manager) {
    return manager.create(inputs, new Shape(rows, steps));
  }

  /** The next-token targets {@code (rows, steps)} in {@code manager}'s memory. */
  public NDArray targets(NDManager manager) {
    return manager.create(targets, new Shape(rows, steps));
  }

  /** The mask {@code (rows, steps)}, 1 where a target counts, in {@code manager}'s memory. */
  public NDArray mask(NDManager manager) {
    return manager.create(mask, new Shape(rows, steps));
  }
}
