package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.spec.FieldSpec;

/**
 * TRL's reference log-probs ({@code DPOTrainer} with {@code precompute_ref_log_probs=True}) on a
 * user's traced causal LM: for the chosen and the rejected completion, prompt + completion cut as
 * TRL's collator cuts it, the sum of log p(token | the tokens before it) over the completion tokens
 * that remain, and how many they are. A row with no completion token left gets 0 and 0 and costs no
 * forward pass.
 */
public final class CausalLmLogprobRunner extends TorchScriptRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "causal-lm-logprob";

  /** Fields, in order. */
  public static final List<FieldSpec> FIELDS =
      List.of(
          FieldSpec.scalar("chosen_logp"),
          FieldSpec.scalar("rejected_logp"),
          new FieldSpec("chosen_tokens", DType.I32, new int[0]),
          new FieldSpec("rejected_tokens", DType.I32, new int[0]));

  /** Most bytes of log-softmax output held at once (rows are processed in chunks under it). */
  private static final long LOG_SOFTMAX_BYTES = 256L << 20;

  private final Truncation truncation;

  /**
   * A runner over a shared loaded {@code model}; {@code weightsDigest} and {@code parameters} say
   * everything else that decides its values (tokenizer, data format, truncation).
   */
  public CausalLmLogprobRunner(
      TorchScriptModel model,
      String weightsDigest,
      Map<String, String> parameters,
      Truncation truncation,
      int padId,
      int microBatch) {
    super(model, weightsDigest, parameters, padId, microBatch);
    this.truncation = truncation;
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public List<FieldSpec> fields() {
    return FIELDS;
  }

  @Override
  protected float[][][] forward(List<? extends Example> micro, NDManager scope) {
    int b = micro.size();
    float[][][] out = new float[FIELDS.size()][b][];
    List<Truncation.Sequence> computed = new ArrayList<>(2 * b);
    int[] slot = new int[2 * b]; // which computed row holds sequence s, or -1
    for (int s = 0; s < 2 * b; s++) {
      TokenizedPreference row = Example.as(TokenizedPreference.class, micro.get(s % b), ID);
      Truncation.Sequence seq =
          truncation.cut(row.promptIds(), s < b ? row.chosenIds() : row.rejectedIds());
      out[s < b ? 2 : 3][s % b] = new float[] {seq.countedTokens()};
      slot[s] = seq.countedTokens() > 0 ? computed.size() : -1;
      if (slot[s] >= 0) {
        computed.add(seq);
      }
    }
    float[] sums = computed.isEmpty() ? new float[0] : logprobSums(computed, scope);
    for (int s = 0; s < 2 * b; s++) {
      out[s < b ? 0 : 1][s % b] = new float[] {slot[s] < 0 ? 0f : sums[slot[s]]};
    }
    return out;
  }

  /** Per sequence, the sum of the counted tokens' log-probs. */
  private float[] logprobSums(List<Truncation.Sequence> sequences, NDManager scope) {
    List<int[]> ids = new ArrayList<>(sequences.size());
    sequences.forEach(s -> ids.add(s.ids()));
    TokenRows in = TokenRows.of(ids, padId);
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
    int chunk = (int) Math.max(1, Math.min(rows, LOG_SOFTMAX_BYTES / perRow));
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

  private static long[] slice(long[] a, int from, int n, int steps) {
    return java.util.Arrays.copyOfRange(a, from * steps, (from + n) * steps);
  }

  private static float[] slice(float[] a, int from, int n, int steps) {
    return java.util.Arrays.copyOfRange(a, from * steps, (from + n) * steps);
  }
}
