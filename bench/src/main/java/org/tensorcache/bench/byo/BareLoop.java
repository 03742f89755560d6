package org.tensorcache.bench.byo;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.hf.TorchScriptModel;

/**
 * A bare DJL loop over a model traced to return logits at every position (format 1): its forward
 * pass over {@link PaddedBatches} made in advance, then log-softmax, gather, mask and sum a few
 * rows at a time; no actors, no replication, no persistence. What the product computed before
 * passes were packed by tokens and the output head run at completion positions only.
 */
final class BareLoop {
  private final TorchScriptModel model;
  private final float[][] values;

  /** A loop over {@code model} that writes {@code values[field][row]} of {@code rows} rows. */
  BareLoop(TorchScriptModel model, int rows) {
    this.model = model;
    this.values = new float[4][rows];
    Arrays.stream(values).forEach(v -> Arrays.fill(v, Float.NaN));
  }

  /** Runs {@code batches} untimed (the warm-up), leaving the values as they were. */
  void warmUp(List<PaddedBatches.Micro> batches) {
    float[][] scratch =
        new float[4][batches.stream().mapToInt(PaddedBatches.Micro::examples).sum()];
    withoutGrad(() -> runAll(batches, scratch, new long[2]));
  }

  /**
   * Runs {@code batches} (every row, from row 0), timed: wall seconds, the process's CPU seconds,
   * the forward passes' and the log-softmax's seconds.
   */
  Map<String, Object> run(List<PaddedBatches.Micro> batches) {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long[] phases = new long[2];
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    int examples = withoutGrad(() -> runAll(batches, values, phases));
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("rows", examples);
    r.put("seconds", (System.nanoTime() - t0) / 1e9);
    r.put("cpu_seconds", (os.getProcessCpuTime() - cpu0) / 1e9);
    r.put("forward_s", phases[0] / 1e9);
    r.put("log_softmax_gather_sum_s", phases[1] / 1e9);
    return r;
  }

  /** Every row's values: chosen_logp, rejected_logp, chosen_tokens, rejected_tokens. */
  float[][] values() {
    return values;
  }

  private int runAll(List<PaddedBatches.Micro> batches, float[][] out, long[] phases) {
    int row = 0;
    for (PaddedBatches.Micro m : batches) {
      micro(m, out, row, phases);
      row += m.examples();
    }
    return row;
  }

  /** Runs {@code work} with autograd off, as the runner does on every compute thread. */
  private static int withoutGrad(IntSupplier work) {
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try {
      return work.getAsInt();
    } finally {
      JniUtils.setGradMode(grad);
    }
  }

  private void micro(PaddedBatches.Micro m, float[][] values, int at, long[] phases) {
    float[] sums = new float[m.rows()];
    if (m.rows() > 0) {
      try (NDManager scope = model.manager().newSubManager()) {
        long t0 = System.nanoTime();
        NDArray logits = model.forward(scope, m.ids(), m.mask(), m.rows(), m.steps());
        long t1 = System.nanoTime();
        logprobSums(logits, m, scope, sums);
        phases[0] += t1 - t0;
        phases[1] += System.nanoTime() - t1;
      }
    }
    int b = m.examples();
    for (int s = 0; s < 2 * b; s++) {
      values[s < b ? 0 : 1][at + s % b] = m.slot()[s] < 0 ? 0f : sums[m.slot()[s]];
      values[s < b ? 2 : 3][at + s % b] = m.countedTokens()[s];
    }
  }

  /** Log-softmax, gather, mask and sum, in chunks of rows of at most 256 MiB of log-softmax. */
  private void logprobSums(NDArray logits, PaddedBatches.Micro m, NDManager scope, float[] sums) {
    int rows = m.rows();
    int steps = m.steps();
    long perRow = (long) steps * model.width() * 4;
    int chunk = (int) Math.max(1, Math.min(rows, MemoryModel.LOG_SOFTMAX_BYTES / perRow));
    for (int from = 0; from < rows; from += chunk) {
      int n = Math.min(chunk, rows - from);
      try (NDManager part = scope.newSubManager()) {
        NDArray lp = logits.get(from + ":" + (from + n)).logSoftmax(-1);
        lp.attach(part);
        long[] tgt = Arrays.copyOfRange(m.targets(), from * steps, (from + n) * steps);
        float[] cnt = Arrays.copyOfRange(m.counted(), from * steps, (from + n) * steps);
        NDArray target = part.create(tgt, new Shape(n, steps, 1));
        NDArray mask = part.create(cnt, new Shape(n, steps));
        float[] chunkSums =
            lp.gather(target, -1).squeeze(-1).mul(mask).sum(new int[] {1}).toFloatArray();
        System.arraycopy(chunkSums, 0, sums, from, n);
      }
    }
  }
}
