package org.tensorcache.model.data;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.Locale;

/** The JSONL row formats a data set can have; detected from the first row unless forced. */
public enum DataFormat {
  /** {@code {"prompt", "chosen", "rejected"}} strings. */
  TEXT,
  /** {@code {"prompt_ids", "chosen_ids", "rejected_ids"}}: TRL's tokenized columns. */
  TOKENS,
  /** TRL's conversational rows: prompt, chosen and rejected as lists of messages. */
  CONVERSATIONAL,
  /** {@code {"text"}}: one text per row, for feature runners. */
  DOCUMENT,
  /** {@code {"prompt", "completion"}} strings: TRL's prompt-completion rows. */
  COMPLETION,
  /** {@code {"input_ids", "completion_mask"}}: TRL's tokenized language-modeling rows. */
  COMPLETION_TOKENS;

  /** The name on the command line. */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses a command-line name, naming the accepted ones otherwise. */
  public static DataFormat parse(String name) {
    for (DataFormat f : values()) {
      if (f.cliName().equals(name)) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "data format '"
            + name
            + "' unknown, expected one of "
            + Arrays.stream(values()).map(DataFormat::cliName).toList());
  }

  /** The format of a row by its keys, or null when it has none of the known shapes. */
  static DataFormat detect(JsonNode row) {
    if (row.has("prompt_ids")) {
      return TOKENS;
    }
    if (row.has("input_ids")) {
      return COMPLETION_TOKENS;
    }
    if (row.has("messages")) {
      return CONVERSATIONAL;
    }
    if (row.has("prompt") && row.has("completion") && !row.has("chosen")) {
      return row.get("prompt").isArray() ? CONVERSATIONAL : COMPLETION;
    }
    if (row.has("prompt")) {
      return row.get("prompt").isArray() ? CONVERSATIONAL : TEXT;
    }
    if (row.has("text")) {
      return DOCUMENT;
    }
    return null;
  }
}
