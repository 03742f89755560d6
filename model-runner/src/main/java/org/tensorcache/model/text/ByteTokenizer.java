package org.tensorcache.model.text;

import java.nio.charset.StandardCharsets;

/**
 * A deterministic byte-level tokenizer: every UTF-8 byte is its own token (ids 0 to 255), plus four
 * special tokens. Nothing to download and nothing that can drift between machines.
 */
public final class ByteTokenizer {
  /** Padding; never a target that counts. */
  public static final int PAD = 256;

  /** Start of a sequence. */
  public static final int BOS = 257;

  /** Separates the prompt from the response. */
  public static final int SEP = 258;

  /** End of the response; part of the response's log-prob, as in open-instruct. */
  public static final int EOS = 259;

  /** Number of token ids. */
  public static final int VOCAB_SIZE = 260;

  private ByteTokenizer() {}

  /** The byte tokens of {@code text} (UTF-8), without special tokens. */
  public static int[] encode(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    int[] ids = new int[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      ids[i] = bytes[i] & 0xFF;
    }
    return ids;
  }

  /** Decodes byte tokens back to text, skipping special tokens. */
  public static String decode(int[] ids) {
    byte[] bytes = new byte[ids.length];
    int n = 0;
    for (int id : ids) {
      if (id < 0 || id >= VOCAB_SIZE) {
        throw new IllegalArgumentException(
            "token id " + id + " out of range [0, " + VOCAB_SIZE + ")");
      }
      if (id < 256) {
        bytes[n++] = (byte) id;
      }
    }
    return new String(bytes, 0, n, StandardCharsets.UTF_8);
  }

  /**
   * Encodes {@code BOS prompt SEP response EOS}; the response's tokens (EOS included) start at
   * {@link Pair#responseStart()}.
   */
  public static Pair encodePair(String prompt, String response) {
    int[] p = encode(prompt);
    int[] r = encode(response);
    int[] tokens = new int[p.length + r.length + 3];
    tokens[0] = BOS;
    System.arraycopy(p, 0, tokens, 1, p.length);
    tokens[p.length + 1] = SEP;
    System.arraycopy(r, 0, tokens, p.length + 2, r.length);
    tokens[tokens.length - 1] = EOS;
    return new Pair(tokens, p.length + 2);
  }

  /** A tokenized prompt and response; {@code tokens[responseStart..]} are the response tokens. */
  public record Pair(int[] tokens, int responseStart) {
    /** Number of tokens. */
    public int length() {
      return tokens.length;
    }
  }
}
