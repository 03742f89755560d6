package org.tensorcache.bench.byo;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.PaddedBatch;

/**
 * The bare DJL loop of before passes were packed by tokens and the output head run at completion
 * positions only: a model traced to return logits at every position (format 1), fixed micro-batches
 * of rows in data order made in advance, then log-softmax, gather, mask and sum a few rows at a
 * time; no actors, no replication, no persistence.
 */
final class BareLoop {
  /**
   * One micro-batch: the chosen then the rejected sequences that have a counted token, right-padded
   * to the longest (a multiple of {@link PaddedBatch#STEP_MULTIPLE}) as {@code rows x steps}
   * arrays; {@code slot}: the padded row of each of the {@code 2 * examples} sequences, or -1.
   */
  record Micro(
      int examples,
      int[] slot,
      float[] countedTokens,
      long[] ids,
      long[] mask,
      long[] targets,
      float[] counted,
      int rows,
      int steps) {}

  private final TorchScriptModel model;

  BareLoop(TorchScriptModel model) {
    this.model = model;
  }

  /** The micro-batches of {@code rows}, {@link ByoSize#BARE_MICRO_BATCH} rows each. */
  static List<Micro> batches(List<TokenizedPreference> rows, Truncation truncation, int padId) {
    List<Micro> out = new ArrayList<>();
    for (int from = 0; from < rows.size(); from += ByoSize.BARE_MICRO_BATCH) {
      int to = Math.min(rows.size(), from + ByoSize.BARE_MICRO_BATCH);
      out.add(micro(rows.subList(from, to), truncation, padId));
    }
    return out;
  }

  private static Micro micro(List<TokenizedPreference> micro, Truncation truncation, int padId) {
    int b = micro.size();
    List<Truncation.Sequence> computed = new ArrayList<>(2 * b);
    int[] slot = new int[2 * b];
    float[] tokens = new float[2 * b];
    for (int s = 0; s < 2 * b; s++) {
      TokenizedPreference row = micro.get(s % b);
      var seq = truncation.cut(row.promptIds(), s < b ? row.chosenIds() : row.rejectedIds());
      tokens[s] = seq.countedTokens();
      slot[s] = seq.countedTokens() > 0 ? computed.size() : -1;
      if (slot[s] >= 0) {
        computed.add(seq);
      }
    }
    int longest = computed.stream().mapToInt(q -> q.ids().length).max().orElse(1);
    int steps = (longest + PaddedBatch.STEP_MULTIPLE - 1) / PaddedBatch.STEP_MULTIPLE;
    steps *= PaddedBatch.STEP_MULTIPLE;
    int n = computed.size();
    long[] ids = new long[n * steps];
    long[] mask = new long[n * steps];
    long[] targets = new long[n * steps];
    float[] counted = new float[n * steps];
    Arrays.fill(ids, padId);
    for (int r = 0; r < n; r++) {
      int[] seq = computed.get(r).ids();
      int first = Math.max(1, computed.get(r).completionStart());
      for (int t = 0; t < seq.length; t++) {
        ids[r * steps + t] = seq[t];
        mask[r * steps + t] = 1;
        if (t + 1 < seq.length) {
          targets[r * steps + t] = seq[t + 1];
          counted[r * steps + t] = t + 1 >= first ? 1f : 0f;
        }
      }
    }
    return new Micro(b, slot, tokens, ids, mask, targets, counted, n, steps);
  }

  /**
   * Runs {@code batches} with autograd off, as the runner does; their values {@code [field][row]}
   * in the order of {@link CausalLmLogprobRunner#FIELDS}; its seconds (wall, CPU, forward, the
   * rest) to {@code timed}.
   */
  float[][] run(List<Micro> batches, Map<String, Object> timed) {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    float[][] values = new float[4][batches.stream().mapToInt(Micro::examples).sum()];
    long[] phases = new long[2];
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    try {
      int row = 0;
      for (Micro m : batches) {
        micro(m, values, row, phases);
        row += m.examples();
      }
    } finally {
      JniUtils.setGradMode(grad);
    }
    timed.put("rows", values[0].length);
    timed.put("seconds", (System.nanoTime() - t0) / 1e9);
    timed.put("cpu_seconds", (os.getProcessCpuTime() - cpu0) / 1e9);
    timed.put("forward_s", phases[0] / 1e9);
    timed.put("log_softmax_gather_sum_s", phases[1] / 1e9);
    return values;
  }

  private void micro(Micro m, float[][] values, int at, long[] phases) {
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
  private void logprobSums(NDArray logits, Micro m, NDManager scope, float[] sums) {
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
