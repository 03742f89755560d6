package org.tensorcache.model.hf;

import java.util.Locale;

/**
 * How prompt + completion are cut to {@code maxLength} tokens, as TRL's preference collator does:
 * {@code keep_start} keeps the first tokens, {@code keep_end} the last; {@code maxLength} 0 cuts
 * nothing. Under {@code keep_start} a row whose prompt alone fills the length keeps no completion
 * token (TRL drops such rows; here they are kept with 0 tokens and log-prob 0).
 */
public record Truncation(int maxLength, Mode mode) {
  /** TRL's {@code truncation_mode}. */
  public enum Mode {
    KEEP_START,
    KEEP_END;

    /** TRL's name of the mode. */
    public String trlName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Parses TRL's name, naming the accepted ones otherwise. */
    public static Mode parse(String name) {
      for (Mode m : values()) {
        if (m.trlName().equals(name)) {
          return m;
        }
      }
      throw new IllegalArgumentException(
          "truncation mode '" + name + "' unknown, expected keep_start or keep_end");
    }
  }

  /** TRL's default: {@code max_length=1024}, {@code keep_start}. */
  public static final Truncation TRL_DEFAULT = new Truncation(1024, Mode.KEEP_START);

  /** Checks the length. */
  public Truncation {
    if (maxLength < 0 || maxLength == 1) {
      throw new IllegalArgumentException(
          "max length " + maxLength + " invalid, expected 0 (no truncation) or >= 2");
    }
    if (mode == null) {
      throw new IllegalArgumentException(
          "truncation mode missing, expected keep_start or keep_end");
    }
  }

  /**
   * One model input: token ids and the first position whose token counts (a completion token with a
   * token before it). The counted tokens are {@code ids[max(1, completionStart)..]}.
   */
  public record Sequence(int[] ids, int completionStart) {
    /** Number of completion tokens whose log-prob is summed. */
    public int countedTokens() {
      return Math.max(0, ids.length - Math.max(1, completionStart));
    }
  }

  /** The sequence {@code prompt + completion}, cut as TRL's collator cuts it. */
  public Sequence cut(int[] prompt, int[] completion) {
    int total = prompt.length + completion.length;
    int from = 0;
    int to = total;
    if (maxLength > 0 && total > maxLength) {
      if (mode == Mode.KEEP_START) {
        to = maxLength;
      } else {
        from = total - maxLength;
      }
    }
    int[] ids = new int[to - from];
    for (int i = from; i < to; i++) {
      ids[i - from] = i < prompt.length ? prompt[i] : completion[i - prompt.length];
    }
    return new Sequence(ids, Math.max(0, prompt.length - from));
  }

  /** Whether TRL would drop a row with this prompt: its prompt alone fills the length. */
  public boolean dropsPrompt(int promptLength) {
    return maxLength > 0 && mode == Mode.KEEP_START && promptLength >= maxLength;
  }

  /** The settings as fingerprint parameters. */
  public String describe() {
    return maxLength == 0 ? "none" : maxLength + "/" + mode.trlName();
  }
}
