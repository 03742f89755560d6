package org.tensorcache.model.hf;

import java.util.Arrays;
import org.tensorcache.model.data.CompletionExample;
import org.tensorcache.model.data.DocumentExample;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.data.TokenizedPreference;

/**
 * Tokenizes text rows as TRL 1.13's {@code DPOTrainer._prepare_dataset} does: the tokenizer's EOS
 * text is appended to each completion unless it already ends with it; the prompt and prompt +
 * completion are tokenized with the tokenizer's defaults (special tokens on); the completion's ids
 * are those of prompt + completion after the prompt's length (TRL cuts by length, and only warns
 * when the prompt's ids are not a prefix).
 */
public final class TrlTokenization {
  private final HfTokenizer tokenizer;
  private final String eosToken;

  /** Tokenization with {@code tokenizer}; {@code eosToken} is the text appended to completions. */
  public TrlTokenization(HfTokenizer tokenizer, String eosToken) {
    if (eosToken == null || eosToken.isEmpty()) {
      throw new IllegalArgumentException(
          "the tokenizer of "
              + tokenizer.file()
              + " names no eos_token (tokenizer_config.json), which TRL appends to text"
              + " completions: give pre-tokenized rows (--format tokens) instead");
    }
    this.tokenizer = tokenizer;
    this.eosToken = eosToken;
  }

  /** TRL's tokenized columns of a text preference row. */
  public TokenizedPreference tokenize(PreferenceExample row) {
    int[] prompt = tokenizer.encode(row.prompt());
    return new TokenizedPreference(
        row.index(),
        prompt,
        completion(row.prompt(), row.chosen(), prompt),
        completion(row.prompt(), row.rejected(), prompt));
  }

  /**
   * A prompt-completion row as TRL 1.13's {@code SFTTrainer} tokenizes it: EOS text appended to the
   * completion unless it ends with it, {@code input_ids} the ids of prompt + completion, {@code
   * completion_mask} 0 on the first {@code len(ids(prompt))} of them and 1 after (TRL cuts by
   * length, and only warns when the prompt's ids are not a prefix).
   */
  public TokenizedCompletion tokenize(CompletionExample row) {
    String text =
        row.completion().endsWith(eosToken) ? row.completion() : row.completion() + eosToken;
    int prompt = tokenizer.encode(row.prompt()).length;
    int[] all = tokenizer.encode(row.prompt() + text);
    int[] mask = new int[all.length];
    Arrays.fill(mask, Math.min(prompt, all.length), all.length, 1);
    return new TokenizedCompletion(row.index(), all, mask);
  }

  private int[] completion(String prompt, String completion, int[] promptIds) {
    String text = completion.endsWith(eosToken) ? completion : completion + eosToken;
    int[] all = tokenizer.encode(prompt + text);
    return all.length <= promptIds.length
        ? new int[0]
        : Arrays.copyOfRange(all, promptIds.length, all.length);
  }

  /** The ids of a text row for a feature runner, special tokens included. */
  public static TokenizedDocument tokenize(DocumentExample row, HfTokenizer tokenizer) {
    return new TokenizedDocument(row.index(), tokenizer.encode(row.text()));
  }
}
