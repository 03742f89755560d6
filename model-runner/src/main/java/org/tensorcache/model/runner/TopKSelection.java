package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.DataType;
import java.util.Arrays;

/**
 * The top-K of next-token distributions: for logits {@code [n, V]}, per position the K ids of the
 * largest {@code log_softmax(logits / T)} (float32), ordered by log-prob descending and ids
 * ascending among equal log-probs, a tie at the K-th place going to the lowest ids; their
 * log-probs; and the log of the mass outside them, {@code -inf} when none is left.
 *
 * <p>The device's top-K does not promise an order among equal values, so it is asked for K + 1: a
 * position whose K-th and (K+1)-th values are equal has a tie at the boundary and is selected
 * exactly on the host from its whole row (rare: it takes equal log-probs); order within the K is
 * always settled on the host. The tail is the sum of the probabilities below the K-th value,
 * computed on the device, plus the values equal to it that were not selected, added on the host.
 */
final class TopKSelection {
  private final int k;
  private final float temperature;

  TopKSelection(int k, float temperature) {
    this.k = k;
    this.temperature = temperature;
  }

  /** Per position: {@code k} ids and log-probs, token after token, and one tail log-prob. */
  record Result(int[] ids, float[] logps, float[] tails) {}

  /** The selection for {@code logits} {@code [n, V]}; temporaries live in its manager. */
  Result select(NDArray logits) {
    int n = Math.toIntExact(logits.getShape().get(0));
    int vocab = Math.toIntExact(logits.getShape().get(1));
    int fetch = Math.min(vocab, k + 1);
    NDArray logp = logits.div(temperature).logSoftmax(-1);
    NDList top = logp.topK(fetch, -1, true, true);
    float[] values = top.get(0).toFloatArray();
    long[] indices = top.get(1).toType(DataType.INT64, false).toLongArray();
    NDArray kth = top.get(0).get(":, " + (k - 1) + ":" + k);
    // the mass below the K-th value, summed as probabilities: log-probs are <= 0, so nothing
    // overflows, and a tail too small for float32 carries no weight a loss could see
    NDArray zero = logp.getManager().create(0f);
    float[] sumBelow =
        NDArrays.where(logp.lt(kth), logp.exp(), zero).sum(new int[] {1}).toFloatArray();
    boolean anyTie = false;
    for (int r = 0; r < n && fetch > k; r++) {
      anyTie |= values[r * fetch + k - 1] == values[r * fetch + k];
    }
    // values equal to the K-th but not selected exist only where the (K+1)-th equals it too
    long[] equal =
        anyTie
            ? logp.eq(kth)
                .toType(DataType.INT32, false)
                .sum(new int[] {1})
                .toType(DataType.INT64, false)
                .toLongArray()
            : null;
    int[] ids = new int[n * k];
    float[] logps = new float[n * k];
    float[] tails = new float[n];
    for (int r = 0; r < n; r++) {
      int at = r * fetch;
      if (fetch > k && values[at + k - 1] == values[at + k]) {
        exact(logp.get(r).toFloatArray(), values[at + k - 1], ids, logps, r * k);
      } else {
        for (int j = 0; j < k; j++) {
          ids[r * k + j] = (int) indices[at + j];
          logps[r * k + j] = values[at + j];
        }
        orderTies(ids, logps, r * k);
      }
      float threshold = logps[r * k + k - 1];
      int selectedEqual = 0;
      for (int j = 0; j < k; j++) {
        selectedEqual += logps[r * k + j] == threshold ? 1 : 0;
      }
      double rest = sumBelow[r] > 0 ? Math.log(sumBelow[r]) : Double.NEGATIVE_INFINITY;
      long unselected = equal == null ? 0 : equal[r] - selectedEqual;
      tails[r] =
          (float) (unselected > 0 ? logAddExp(rest, threshold + Math.log(unselected)) : rest);
    }
    return new Result(ids, logps, tails);
  }

  /** The K largest of one whole row, the lowest ids among those equal to {@code kth}. */
  private void exact(float[] row, float kth, int[] ids, float[] logps, int at) {
    int taken = 0;
    for (int v = 0; v < row.length; v++) {
      if (row[v] > kth) {
        ids[at + taken++] = v;
      }
    }
    for (int v = 0; v < row.length && taken < k; v++) {
      if (row[v] == kth) {
        ids[at + taken++] = v;
      }
    }
    Integer[] order = new Integer[k];
    for (int j = 0; j < k; j++) {
      order[j] = ids[at + j];
    }
    Arrays.sort(order, (a, b) -> row[a] != row[b] ? Float.compare(row[b], row[a]) : a - b);
    for (int j = 0; j < k; j++) {
      ids[at + j] = order[j];
      logps[at + j] = row[order[j]];
    }
  }

  /** Values come sorted descending: each run of equal values gets its ids ascending. */
  private void orderTies(int[] ids, float[] logps, int at) {
    int from = at;
    for (int j = at + 1; j <= at + k; j++) {
      if (j == at + k || logps[j] != logps[from]) {
        Arrays.sort(ids, from, j);
        from = j;
      }
    }
  }

  private static double logAddExp(double a, double b) {
    if (a == Double.NEGATIVE_INFINITY) {
      return b;
    }
    double max = Math.max(a, b);
    return max + Math.log1p(Math.exp(-Math.abs(a - b)));
  }
}
