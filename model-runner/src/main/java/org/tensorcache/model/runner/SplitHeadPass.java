package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TracedHead;
import org.tensorcache.model.hf.Truncation;

/**
 * Log-prob sums from a model traced as a body and an output head (format 2): the body's last hidden
 * states, only those of the positions that predict a counted token, through the head in chunks that
 * the memory bound sizes, each chunk's logits reduced to the target's log-prob and freed before the
 * next. No logits exist for prompt or padding positions.
 */
final class SplitHeadPass implements LogprobPass {
  private final TorchScriptModel body;
  private final TracedHead head;
  private final TokenBudget budget;
  private final int padId;

  SplitHeadPass(TorchScriptModel body, TracedHead head, TokenBudget budget, int padId) {
    this.body = body;
    this.head = head;
    this.budget = budget;
    this.padId = padId;
  }

  @Override
  public float[] sums(List<Truncation.Sequence> sequences, NDManager scope) {
    TokenRows in = TokenRows.ofSequences(sequences, padId);
    int rows = in.rows();
    // position t predicts token t + 1: the counted tokens [first, length) are predicted by the
    // positions [first - 1, length - 1), one run per sequence
    int positions = 0;
    for (Truncation.Sequence s : sequences) {
      positions += s.countedTokens();
    }
    long[] targets = new long[positions];
    int[] owner = new int[positions];
    NDArray hidden = body.forward(scope, in.ids(), in.mask(), rows, in.steps());
    NDList runs = new NDList(rows);
    int p = 0;
    for (int r = 0; r < rows; r++) {
      Truncation.Sequence s = sequences.get(r);
      int first = Math.max(1, s.completionStart());
      int length = s.ids().length;
      for (int t = first; t < length; t++, p++) {
        targets[p] = s.ids()[t];
        owner[p] = r;
      }
      runs.add(hidden.get(r + "," + (first - 1) + ":" + (length - 1)));
    }
    NDArray gathered = runs.size() == 1 ? runs.head() : NDArrays.concat(runs, 0);
    if (runs.size() > 1) {
      runs.close();
      hidden.close();
    }
    // as large as the bound allows: each chunk reads the whole head's weights (V x H floats), so
    // small chunks of a wide vocabulary are bound by memory bandwidth (24 MiB chunks of a
    // 151,936-token head took 1.5x the time of chunks the 2 GiB bound sizes, on a CPU)
    int chunk = budget.headChunk(rows, in.steps(), positions);
    double[] sums = new double[rows];
    for (int from = 0; from < positions; from += chunk) {
      int n = Math.min(chunk, positions - from);
      try (NDManager part = scope.newSubManager()) {
        NDArray h = gathered.get(from + ":" + (from + n));
        h.attach(part);
        NDArray logits = head.forward(part, h);
        NDArray logp = logits.logSoftmax(-1);
        logits.close();
        NDArray target = part.create(Arrays.copyOfRange(targets, from, from + n), new Shape(n, 1));
        float[] picked = logp.gather(target, -1).toFloatArray();
        for (int k = 0; k < n; k++) {
          sums[owner[from + k]] += picked[k];
        }
      }
    }
    float[] out = new float[rows];
    for (int r = 0; r < rows; r++) {
      out[r] = (float) sums[r];
    }
    return out;
  }

  @Override
  public String describe() {
    return "output head at completion positions only (body.pt + head.pt)";
  }
}
