package org.tensorcache.bench.byo;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.hf.TorchScriptModel;

/**
 * The reference loop on the JVM: the traced model's forward pass over padded micro-batches made in
 * advance, then the same log-softmax, gather, mask and sum as {@code CausalLmLogprobRunner}, in the
 * same chunks; no actors, no replication, no persistence.
 */
final class BareLoop {
  /** Most bytes of log-softmax output held at once, as in {@code CausalLmLogprobRunner}. */
  private static final long LOG_SOFTMAX_BYTES = 256L << 20;

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
    withoutGrad(() -> runAll(batches, scratch, 0, new long[2]));
  }

  /**
   * Runs {@code batches}, whose first row is row {@code at}, timed into {@code tally}: the forward
   * pass, the log-softmax and what follows it, and the process's CPU time.
   */
  void run(List<PaddedBatches.Micro> batches, int at, Tally tally) {
    var cpu =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long[] phases = new long[2];
    Map<String, Double> threads0 = ThreadCpu.snapshot();
    long cpu0 = cpu.getProcessCpuTime();
    long t0 = System.nanoTime();
    int examples = withoutGrad(() -> runAll(batches, values, at, phases));
    double seconds = (System.nanoTime() - t0) / 1e9;
    tally.add(
        examples,
        seconds,
        Map.of(
            "forward_s", phases[0] / 1e9,
            "log_softmax_gather_sum_s", phases[1] / 1e9,
            "cpu_s", (cpu.getProcessCpuTime() - cpu0) / 1e9));
    tally.addThreadCpu(ThreadCpu.groups(threads0, ThreadCpu.snapshot()));
  }

  /** Every row's values so far: chosen_logp, rejected_logp, chosen_tokens, rejected_tokens. */
  float[][] values() {
    return values;
  }

  private int runAll(List<PaddedBatches.Micro> batches, float[][] out, int at, long[] phases) {
    int row = at;
    for (PaddedBatches.Micro m : batches) {
      micro(m, out, row, phases);
      row += m.examples();
    }
    return row - at;
  }

  /** Runs {@code work} with autograd off, as the runner does on every compute thread. */
  private static int withoutGrad(java.util.function.IntSupplier work) {
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

  /** {@code CausalLmLogprobRunner}'s arithmetic, chunk for chunk, so that the bits are the same. */
  private void logprobSums(NDArray logits, PaddedBatches.Micro m, NDManager scope, float[] sums) {
    int rows = m.rows();
    int steps = m.steps();
    long perRow = (long) steps * model.width() * 4;
    int chunk = (int) Math.max(1, Math.min(rows, LOG_SOFTMAX_BYTES / perRow));
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
