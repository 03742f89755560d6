package org.tensorcache.model.runner;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TracedHead;
import org.tensorcache.model.hf.Truncation;

/**
 * A distillation teacher on a user's traced causal LM: for every token TRL's SFT loss trains on
 * (completion tokens after truncation, position {@code p - 1} predicting token {@code p}) the top-K
 * ids of the next-token distribution {@code log_softmax(logits / T)}, their log-probs, and the log
 * of the mass outside them (see {@link TopKSelection}). Sequences are packed into forward passes
 * under the token budget, as {@link CausalLmLogprobRunner} packs them; with a split head only the
 * trained positions go through the head, a bounded chunk at a time.
 */
public final class TopKTeacherRunner implements TokenRunner {
  /** Runner id in fingerprints. */
  public static final String ID = "topk-teacher";

  /** Version of the computation. */
  public static final String VERSION = "1";

  /**
   * The selection keeps about three times the temporaries of a log-prob over the head's logits
   * (log-probs, masked log-probs, their exponentials): head chunks are a third of a log-prob
   * pass's.
   */
  private static final int SELECTION_COPIES = 3;

  /** Rows per call of the split head are a multiple of this (matrix kernels' row blocks). */
  static final int HEAD_ROWS_MULTIPLE = 64;

  /**
   * At most this many rows per call of the split head: a pass's last call is padded to the full
   * count, so more rows waste more than the larger matrix product gains (on a CPU, 128 filled rows
   * of 151,936 ids in less than half the time 576 did).
   */
  static final int MAX_HEAD_ROWS = 128;

  private final TorchScriptModel model;
  private final TracedHead head;
  private final String weightsDigest;
  private final Map<String, String> parameters;
  private final Truncation truncation;
  private final int padId;
  private final TokenBudget budget;
  private final int k;
  private final List<FieldSpec> fields;
  private final TopKSelection selection;

  /**
   * A teacher over {@code model}: the body of a split export when {@code head} is not null (format
   * 2), else a model returning logits at every position (format 1). Refuses a {@code k} outside
   * {@code [1, V]} and a temperature that is not a positive finite number.
   */
  public TopKTeacherRunner(
      TorchScriptModel model,
      TracedHead head,
      String weightsDigest,
      Map<String, String> parameters,
      Truncation truncation,
      int padId,
      TokenBudget budget,
      int k,
      float temperature) {
    checkOptions(k, temperature, head != null ? head.width() : model.width());
    this.model = model;
    this.head = head;
    this.weightsDigest = weightsDigest;
    this.parameters = Map.copyOf(parameters);
    this.truncation = truncation;
    this.padId = Math.max(0, padId);
    this.budget = budget;
    this.k = k;
    this.fields = fields(k);
    this.selection = new TopKSelection(k, temperature);
  }

  /** The fields of a teacher of top {@code k}, in order. */
  public static List<FieldSpec> fields(int k) {
    return List.of(
        FieldSpec.perToken("teacher_ids", DType.I32, k),
        FieldSpec.perToken("teacher_logps", DType.F32, k),
        FieldSpec.perToken("teacher_tail_logp", DType.F32));
  }

  /**
   * Refuses a top-K outside {@code [1, vocab]} or a temperature that is not positive and finite.
   */
  public static void checkOptions(int k, float temperature, int vocab) {
    if (k < 1 || k > vocab) {
      throw new IllegalArgumentException(
          "top-K " + k + " invalid, expected 1 to the model's vocabulary size " + vocab);
    }
    if (!(temperature > 0) || Float.isInfinite(temperature)) {
      throw new IllegalArgumentException(
          "temperature " + temperature + " invalid, expected a finite number > 0");
    }
  }

  /**
   * The sequence the teacher sees for {@code row}, refused (naming the row) when no trained token
   * is left after truncation.
   */
  public static int sequenceLength(Example row, Truncation truncation, String source) {
    return checked(row, truncation, source).ids().length;
  }

  private static TeacherSequence checked(Example row, Truncation truncation, String source) {
    TokenizedCompletion c = Example.as(TokenizedCompletion.class, row, ID);
    TeacherSequence s = TeacherSequence.of(c, truncation);
    if (s.tokens() == 0) {
      throw new InvalidRowException(
          source,
          row.index(),
          String.format(
              "has no completion token after position 0 left after truncation to %s (%d ids, %d"
                  + " with completion_mask 1), expected at least one to compute a teacher for",
              truncation.describe(), c.ids().length, countOnes(c.completionMask())));
    }
    return s;
  }

  private static int countOnes(int[] mask) {
    int n = 0;
    for (int m : mask) {
      n += m;
    }
    return n;
  }

  @Override
  public TokenOutput run(List<? extends Example> batch) {
    int b = batch.size();
    long[] indices = new long[b];
    int[] lengths = new int[b];
    List<TeacherSequence> sequences = new ArrayList<>(b);
    for (int i = 0; i < b; i++) {
      TeacherSequence s = checked(batch.get(i), truncation, "batch");
      indices[i] = batch.get(i).index();
      lengths[i] = s.ids().length;
      sequences.add(s);
    }
    Object[][] values = new Object[3][b];
    int[] tokens = new int[b];
    for (int[] members : OnePaddingPasses.of(budget, lengths, indices)) {
      List<TeacherSequence> pass = new ArrayList<>(members.length);
      for (int m : members) {
        pass.add(sequences.get(m));
      }
      TopKSelection.Result r = NoGrad.run(model.manager(), scope -> pass(pass, scope));
      int from = 0;
      for (int m : members) {
        int n = sequences.get(m).tokens();
        tokens[m] = n;
        values[0][m] = Arrays.copyOfRange(r.ids(), from * k, (from + n) * k);
        values[1][m] = Arrays.copyOfRange(r.logps(), from * k, (from + n) * k);
        values[2][m] = Arrays.copyOfRange(r.tails(), from, from + n);
        from += n;
      }
    }
    return TokenOutput.validated(ID, fields, indices, tokens, values);
  }

  /**
   * Positions per call of the split head: a multiple of {@link #HEAD_ROWS_MULTIPLE} fixed by the
   * settings alone, the last chunk of a pass padded to it, because a matrix product's rows change
   * with the number of rows (other kernels) but not with the other rows; sized to half the memory
   * bound, and at most {@link #MAX_HEAD_ROWS}.
   */
  private int headRows() {
    long perRow = budget.memory().headBytes(1) * SELECTION_COPIES;
    long rows = budget.memoryBound() / 2 / perRow / HEAD_ROWS_MULTIPLE * HEAD_ROWS_MULTIPLE;
    return (int) Math.max(HEAD_ROWS_MULTIPLE, Math.min(MAX_HEAD_ROWS, rows));
  }

  /** The selection at every trained position of one pass, sequence after sequence. */
  private TopKSelection.Result pass(List<TeacherSequence> pass, NDManager scope) {
    List<int[]> ids = new ArrayList<>(pass.size());
    pass.forEach(s -> ids.add(s.ids()));
    TokenRows in = TokenRows.of(ids, padId);
    int positions = 0;
    for (TeacherSequence s : pass) {
      positions += s.tokens();
    }
    long[] at = new long[positions];
    int p = 0;
    for (int r = 0; r < pass.size(); r++) {
      for (int t : pass.get(r).targets()) {
        at[p++] = (long) r * in.steps() + t - 1; // position t - 1 predicts token t
      }
    }
    NDArray out = model.forward(scope, in.ids(), in.mask(), in.rows(), in.steps());
    long width = out.getShape().get(2);
    NDArray gathered = out.reshape(in.rows() * (long) in.steps(), width).get(scope.create(at));
    out.close();
    int chunk =
        head != null
            ? headRows()
            : (int) Math.max(1, MemoryModel.LOG_SOFTMAX_BYTES / (4L * width * SELECTION_COPIES));
    int[] outIds = new int[positions * k];
    float[] outLogps = new float[positions * k];
    float[] outTails = new float[positions];
    for (int from = 0; from < positions; from += chunk) {
      int n = Math.min(chunk, positions - from);
      try (NDManager part = scope.newSubManager()) {
        NDArray h = gathered.get(from + ":" + (from + n));
        h.attach(part);
        if (head != null && n < chunk) {
          h = h.concat(part.zeros(new Shape(chunk - n, width)), 0);
        }
        NDArray logits = head != null ? head.forward(part, h) : h;
        if (logits.getShape().get(0) > n) {
          logits = logits.get("0:" + n); // the padding rows, dropped before the selection's passes
        }
        TopKSelection.Result r = selection.select(logits);
        System.arraycopy(r.ids(), 0, outIds, from * k, n * k);
        System.arraycopy(r.logps(), 0, outLogps, from * k, n * k);
        System.arraycopy(r.tails(), 0, outTails, from, n);
      }
    }
    return new TopKSelection.Result(outIds, outLogps, outTails);
  }

  /** How the logits are computed, for the fill's output. */
  public String path() {
    return head != null
        ? "output head at completion positions only (body.pt + head.pt)"
        : "logits at every position (one model.pt, format 1)";
  }

  /** The top-K. */
  public int k() {
    return k;
  }

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String version() {
    return VERSION;
  }

  @Override
  public List<FieldSpec> fields() {
    return fields;
  }

  @Override
  public String weightsDigest() {
    return weightsDigest;
  }

  @Override
  public Map<String, String> parameters() {
    return parameters;
  }

  /** The shared model is closed by its owner, not by each runner. */
  @Override
  public void close() {}
}
