package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.Truncation;

/**
 * Log-prob sums from a model traced as one module returning logits at every position (format 1):
 * the whole {@code [rows, steps, V]} logits, then their log-softmax a few rows at a time.
 */
final class FullLogitsPass implements LogprobPass {
  private final TorchScriptModel model;
  private final int padId;

  FullLogitsPass(TorchScriptModel model, int padId) {
    this.model = model;
    this.padId = padId;
  }

  @Override
  public float[] sums(List<Truncation.Sequence> sequences, NDManager scope) {
    TokenRows in = TokenRows.ofSequences(sequences, padId);
    int rows = in.rows();
    int steps = in.steps();
    long[] targets = new long[rows * steps];
    float[] counted = new float[rows * steps];
    for (int r = 0; r < rows; r++) {
      Truncation.Sequence s = sequences.get(r);
      int first = Math.max(1, s.completionStart());
      for (int t = 0; t + 1 < s.ids().length; t++) {
        targets[r * steps + t] = s.ids()[t + 1];
        counted[r * steps + t] = t + 1 >= first ? 1f : 0f;
      }
    }
    NDArray logits = model.forward(scope, in.ids(), in.mask(), rows, steps);
    long perRow = (long) steps * model.width() * 4;
    int chunk = (int) Math.max(1, Math.min(rows, MemoryModel.LOG_SOFTMAX_BYTES / perRow));
    float[] sums = new float[rows];
    for (int from = 0; from < rows; from += chunk) {
      int n = Math.min(chunk, rows - from);
      // the log-softmax of a chunk is as large as its logits: free it before the next chunk
      try (NDManager part = scope.newSubManager()) {
        NDArray lp = logits.get(from + ":" + (from + n)).logSoftmax(-1);
        lp.attach(part);
        NDArray tgt = part.create(slice(targets, from, n, steps), new Shape(n, steps, 1));
        NDArray mask = part.create(slice(counted, from, n, steps), new Shape(n, steps));
        float[] chunkSums =
            lp.gather(tgt, -1).squeeze(-1).mul(mask).sum(new int[] {1}).toFloatArray();
        System.arraycopy(chunkSums, 0, sums, from, n);
      }
    }
    return sums;
  }

  @Override
  public String describe() {
    return "logits at every position (one model.pt, format 1)";
  }

  private static long[] slice(long[] a, int from, int n, int steps) {
    return Arrays.copyOfRange(a, from * steps, (from + n) * steps);
  }

  private static float[] slice(float[] a, int from, int n, int steps) {
    return Arrays.copyOfRange(a, from * steps, (from + n) * steps);
  }
}
