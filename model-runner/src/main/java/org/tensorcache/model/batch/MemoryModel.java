package org.tensorcache.model.batch;

/**
 * An upper estimate of the working memory of one forward pass over {@code rows x steps} padded
 * tokens, beyond the model's weights, from the model's sizes. It counts float32 activations: the
 * widest per-token tensors of a transformer layer (residual, attention projections, the MLP's three
 * {@code intermediate}-wide tensors) alive at once, the attention scores of every head as if
 * materialised, and what the output side keeps: the hidden states and one head chunk of logits
 * ({@link Output#SPLIT_HEAD}), the full {@code [rows, steps, vocab]} logits ({@link
 * Output#FULL_LOGITS}), or the hidden states and their mean ({@link Output#HIDDEN_STATES}).
 */
public record MemoryModel(Output output, int hidden, int heads, int intermediate, int vocab) {
  /** What the traced model returns. */
  public enum Output {
    /** Last hidden states, with the output head as a second module applied to chosen positions. */
    SPLIT_HEAD,
    /** Logits at every position. */
    FULL_LOGITS,
    /** Last hidden states of an encoder. */
    HIDDEN_STATES
  }

  /** Most bytes of log-softmax the full-logits path holds at once beside the logits. */
  public static final long LOG_SOFTMAX_BYTES = 256L << 20;

  /** Bytes of one head position: its logits, their log-softmax and the kernel's scratch. */
  private static final long HEAD_COPIES = 3;

  /** Checks the sizes. */
  public MemoryModel {
    if (hidden < 1 || heads < 1 || intermediate < 1 || vocab < 1) {
      throw new IllegalArgumentException(
          String.format(
              "model sizes hidden %d, heads %d, intermediate %d, vocabulary %d invalid,"
                  + " expected >= 1 each",
              hidden, heads, intermediate, vocab));
    }
  }

  /**
   * The sizes of a model that says only some of them: heads default to one per 64 hidden units, the
   * MLP to 4 x hidden (a conservative guess for models exported without them).
   */
  public static MemoryModel of(Output output, int hidden, int heads, int intermediate, int vocab) {
    int h = Math.max(1, hidden);
    return new MemoryModel(
        output,
        h,
        heads > 0 ? heads : Math.max(1, h / 64),
        intermediate > 0 ? intermediate : 4 * h,
        Math.max(1, vocab));
  }

  /** Peak bytes of the model body over {@code rows x steps} tokens. */
  public long bodyBytes(int rows, int steps) {
    long tokens = (long) rows * steps;
    long perToken = 4L * (6L * hidden + 3L * intermediate);
    long scores = 2L * 4L * rows * heads * (long) steps * steps;
    return tokens * perToken + scores;
  }

  /** Peak bytes of a whole pass, with the smallest head chunk (one position) where there is one. */
  public long passBytes(int rows, int steps) {
    long tokens = (long) rows * steps;
    long hiddenStates = tokens * hidden * 4L;
    return switch (output) {
      case SPLIT_HEAD ->
          Math.max(bodyBytes(rows, steps) + hiddenStates, 2 * hiddenStates + headBytes(1));
      case FULL_LOGITS -> {
        long logits = tokens * vocab * 4L;
        long row = (long) steps * vocab * 4L;
        yield bodyBytes(rows, steps)
            + logits
            + 2 * Math.min(logits, Math.max(row, LOG_SOFTMAX_BYTES));
      }
      case HIDDEN_STATES -> bodyBytes(rows, steps) + 2 * hiddenStates;
    };
  }

  /** Bytes of the output head over {@code positions} positions. */
  public long headBytes(int positions) {
    return HEAD_COPIES * 4L * vocab * positions;
  }

  /**
   * How many positions of a {@code rows x steps} pass go through the output head at once under
   * {@code bound}: at least 1, at most {@code positions}.
   */
  public int headChunk(int rows, int steps, int positions, long bound) {
    long hiddenStates = (long) rows * steps * hidden * 4L;
    long room = bound - 2 * hiddenStates;
    long chunk = room / headBytes(1);
    return (int) Math.max(1, Math.min(positions, chunk));
  }
}
