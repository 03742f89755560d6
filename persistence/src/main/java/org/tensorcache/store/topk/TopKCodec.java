package org.tensorcache.store.topk;

/**
 * Codes the teacher's output for the tokens of one row: per token the top-K ids, their log-probs
 * and the log of the probability outside them, as one byte string. Decoded, a token's ids come out
 * in ascending order, each with its log-prob.
 *
 * <p>Ids are sorted and stored as Rice-coded gaps, which costs about {@code log2(V / K) + 1.5} bits
 * where a plain id costs {@code log2(V)}, in both forms; they are never lossy.
 *
 * <p>The compact form keeps what a distillation loss depends on, the distribution, rather than each
 * log-prob to a fixed precision. Each probability is stored as its square root quantized to {@code
 * 1 / levels} (the tail mass too), in an exponential Golomb code, short for the many small ones. A
 * uniform step in {@code sqrt(p)} is a step in {@code log p} of {@code 2 / (levels * sqrt(p))}:
 * fine where the probability is large and coarse where it carries little weight, so every entry
 * adds about the same divergence, {@code 1 / (6 levels^2)} nats, and a token's KL from the exact
 * distribution is about {@code (K + 1) / (6 levels^2)}. Decoding renormalizes the K + 1 masses, so
 * the log-probs and the tail decoded always sum to one.
 *
 * <p>The exact form keeps the float32 values as they are. Both forms are a pure function of their
 * input: equal rows code to equal bytes on every machine ({@link StrictMath}).
 */
public final class TopKCodec {
  /**
   * The expected KL per token, in nats, that {@link #compact} sizes its steps for: below the 1e-3
   * that the storage is held to, with room for tokens whose divergence is above the mean.
   */
  public static final double EXPECTED_KL = 4e-4;

  private final int vocab;
  private final int k;
  private final int levels;
  private final boolean exact;
  private final double[][] tables; // of the compact form, built once

  /**
   * @param vocab the teacher's vocabulary size; ids are in {@code [0, vocab)}
   * @param k the number of ids per token, in {@code [1, vocab]}
   * @param levels the steps of {@code sqrt(p)} in the compact form, in {@code [1, 65535]}
   * @param exact whether to keep ids and float32 values as they are
   */
  public TopKCodec(int vocab, int k, int levels, boolean exact) {
    if (vocab < 2) {
      throw new IllegalArgumentException("vocabulary size " + vocab + ", expected at least 2");
    }
    if (k < 1 || k > vocab) {
      throw new IllegalArgumentException(
          "top-k " + k + ", expected 1.." + vocab + " (the vocabulary size)");
    }
    if (levels < 1 || levels > 65535) {
      throw new IllegalArgumentException("levels " + levels + ", expected 1..65535");
    }
    this.vocab = vocab;
    this.k = k;
    this.levels = levels;
    this.exact = exact;
    this.tables = exact ? new double[2][] : TokenCoder.tables(levels);
  }

  /**
   * The compact form for top-{@code k} of {@code vocab} ids, with {@code sqrt((k + 1) / (6 *
   * EXPECTED_KL))} levels: its expected KL per token is {@link #EXPECTED_KL} whatever K.
   */
  public static TopKCodec compact(int vocab, int k) {
    return new TopKCodec(vocab, k, levelsFor(k), false);
  }

  /** The exact form: float32 values as they are. */
  public static TopKCodec exact(int vocab, int k) {
    return new TopKCodec(vocab, k, levelsFor(k), true);
  }

  /** The levels of {@link #compact} for top-{@code k}. */
  public static int levelsFor(int k) {
    return (int) Math.min(65535, Math.ceil(Math.sqrt((k + 1.0) / (6 * EXPECTED_KL))));
  }

  /** K: ids per token. */
  public int k() {
    return k;
  }

  /**
   * The bytes of one row of {@code tokens} tokens.
   *
   * @param ids per token its K distinct ids, {@code tokens * K} in all
   * @param logps per token the log-probs of those ids, each in {@code [-inf, 0]}
   * @param tailLogps per token the log of the probability outside its K ids, in {@code [-inf, 0]}
   */
  public byte[] encode(int tokens, int[] ids, float[] logps, float[] tailLogps) {
    checkLengths(tokens, ids.length, logps.length, tailLogps.length);
    BitWriter out = new BitWriter();
    TokenCoder coder = newCoder();
    for (int t = 0; t < tokens; t++) {
      checkToken(t, ids, logps, tailLogps[t]);
      coder.encode(t, ids, logps, tailLogps[t], out);
    }
    return out.toBytes();
  }

  /**
   * Decodes {@code tokens} tokens from {@code bytes[offset, offset + length)} into the arrays from
   * token {@code at} on; bytes that are not exactly such a row are an {@link
   * IllegalArgumentException}.
   */
  public void decode(
      byte[] bytes,
      int offset,
      int length,
      int tokens,
      int[] ids,
      float[] logps,
      float[] tailLogps,
      int at) {
    checkLengths(at + tokens, ids.length, logps.length, tailLogps.length);
    BitReader in = new BitReader(bytes, offset, length);
    TokenCoder coder = newCoder();
    for (int t = at; t < at + tokens; t++) {
      coder.decode(in, t, ids, logps, tailLogps);
    }
    long used = in.position() - ((long) offset << 3);
    if ((used + 7) >>> 3 != length) {
      throw new IllegalArgumentException(
          "encoded row of "
              + tokens
              + " tokens ends after "
              + ((used + 7) >>> 3)
              + " of its "
              + length
              + " bytes");
    }
  }

  private TokenCoder newCoder() {
    return new TokenCoder(vocab, k, levels, exact, tables);
  }

  private void checkLengths(int tokens, int ids, int logps, int tails) {
    long entries = (long) tokens * k;
    if (tokens < 0 || ids < entries || logps < entries || tails < tokens) {
      throw new IllegalArgumentException(
          String.format(
              "%d tokens of top-%d need %d ids, %d log-probs and %d tail log-probs, got %d, %d"
                  + " and %d",
              tokens, k, entries, entries, tokens, ids, logps, tails));
    }
  }

  private void checkToken(int t, int[] ids, float[] logps, float tail) {
    for (int j = t * k; j < (t + 1) * k; j++) {
      if (ids[j] < 0 || ids[j] >= vocab) {
        throw new IllegalArgumentException(
            "token " + t + ": id " + ids[j] + ", expected one in [0, " + vocab + ")");
      }
      checkLogp(t, "log-prob of id " + ids[j], logps[j]);
    }
    checkLogp(t, "tail log-prob", tail);
  }

  private static void checkLogp(int t, String what, float value) {
    if (!(value <= 0)) { // NaN too
      throw new IllegalArgumentException(
          "token " + t + ": " + what + " is " + value + ", expected a log-prob in [-inf, 0]");
    }
  }
}
