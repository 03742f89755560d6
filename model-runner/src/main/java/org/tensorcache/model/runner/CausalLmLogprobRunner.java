package org.tensorcache.model.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TracedHead;
import org.tensorcache.model.hf.Truncation;

/**
 * TRL's reference log-probs ({@code DPOTrainer} with {@code precompute_ref_log_probs=True}) on a
 * user's traced causal LM: for the chosen and the rejected completion, prompt + completion cut as
 * TRL's collator cuts it, the sum of log p(token | the tokens before it) over the completion tokens
 * that remain, and how many they are. A row with no completion token left gets 0 and 0 and costs no
 * forward pass. The sequences of a batch are sorted by length and packed into forward passes under
 * the token budget, so a pass pads little; the passes are a pure function of the batch.
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

  private final Truncation truncation;
  private final LogprobPass pass;

  private CausalLmLogprobRunner(
      TorchScriptModel model,
      LogprobPass pass,
      String weightsDigest,
      Map<String, String> parameters,
      Truncation truncation,
      int padId,
      TokenBudget budget) {
    super(model.manager(), weightsDigest, parameters, padId, budget);
    this.truncation = truncation;
    this.pass = pass;
  }

  /** A runner over a shared body and output head traced apart (format 2). */
  public static CausalLmLogprobRunner splitHead(
      TorchScriptModel body,
      TracedHead head,
      String weightsDigest,
      Map<String, String> parameters,
      Truncation truncation,
      int padId,
      TokenBudget budget) {
    return new CausalLmLogprobRunner(
        body,
        new SplitHeadPass(body, head, budget, Math.max(0, padId)),
        weightsDigest,
        parameters,
        truncation,
        padId,
        budget);
  }

  /** A runner over a shared model returning logits at every position (format 1). */
  public static CausalLmLogprobRunner fullLogits(
      TorchScriptModel model,
      String weightsDigest,
      Map<String, String> parameters,
      Truncation truncation,
      int padId,
      TokenBudget budget) {
    return new CausalLmLogprobRunner(
        model,
        new FullLogitsPass(model, Math.max(0, padId)),
        weightsDigest,
        parameters,
        truncation,
        padId,
        budget);
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public List<FieldSpec> fields() {
    return FIELDS;
  }

  /** How log-probs are computed, for the fill's output. */
  public String path() {
    return pass.describe();
  }

  /** The token count of each sequence of {@code row} that needs a forward pass. */
  public static int[] sequenceLengths(Example row, Truncation truncation) {
    TokenizedPreference p = Example.as(TokenizedPreference.class, row, ID);
    int[] out = new int[2];
    int n = 0;
    for (int[] completion : new int[][] {p.chosenIds(), p.rejectedIds()}) {
      Truncation.Sequence s = truncation.cut(p.promptIds(), completion);
      if (s.countedTokens() > 0) {
        out[n++] = s.ids().length;
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    int b = batch.size();
    float[][][] out = new float[FIELDS.size()][b][];
    long[] indices = new long[b];
    List<Truncation.Sequence> computed = new ArrayList<>(2 * b);
    List<Integer> slots = new ArrayList<>(2 * b); // 2 * example + side, per computed sequence
    for (int i = 0; i < b; i++) {
      TokenizedPreference row = Example.as(TokenizedPreference.class, batch.get(i), ID);
      indices[i] = row.index();
      for (int side = 0; side < 2; side++) {
        Truncation.Sequence seq =
            truncation.cut(row.promptIds(), side == 0 ? row.chosenIds() : row.rejectedIds());
        out[2 + side][i] = new float[] {seq.countedTokens()};
        out[side][i] = new float[] {0f};
        if (seq.countedTokens() > 0) {
          computed.add(seq);
          slots.add(2 * i + side);
        }
      }
    }
    int[] lengths = new int[computed.size()];
    long[] keys = new long[computed.size()];
    for (int s = 0; s < lengths.length; s++) {
      lengths[s] = computed.get(s).ids().length;
      int slot = slots.get(s);
      keys[s] = 2 * indices[slot / 2] + slot % 2;
    }
    for (int[] members : budget.passes(lengths, keys)) {
      List<Truncation.Sequence> sequences = new ArrayList<>(members.length);
      for (int s : members) {
        sequences.add(computed.get(s));
      }
      float[] sums = inScope(scope -> pass.sums(sequences, scope));
      for (int k = 0; k < members.length; k++) {
        int slot = slots.get(members[k]);
        out[slot % 2][slot / 2][0] = sums[k];
      }
    }
    return RunnerOutput.validated(ID, FIELDS, indices, out);
  }
}
