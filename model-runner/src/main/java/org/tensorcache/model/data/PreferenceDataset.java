package org.tensorcache.model.data;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A preference data set held in memory, with the SHA-256 of its file for fingerprints. */
public record PreferenceDataset(Path source, List<PreferenceExample> examples, String digest) {
  /** Copies the list; the data set is immutable. */
  public PreferenceDataset {
    examples = List.copyOf(examples);
  }

  /** Reads and checks every line of a JSONL file. */
  public static PreferenceDataset load(Path file) throws IOException {
    List<PreferenceExample> examples = new ArrayList<>();
    try (PreferenceReader reader = PreferenceReader.open(file)) {
      while (reader.hasNext()) {
        examples.add(reader.next());
      }
      return new PreferenceDataset(file, examples, reader.digest());
    }
  }

  /** Number of examples. */
  public int size() {
    return examples.size();
  }

  /** The example at {@code index}, with an error naming the valid range otherwise. */
  public PreferenceExample get(long index) {
    if (index < 0 || index >= examples.size()) {
      throw new IndexOutOfBoundsException(
          "index " + index + " out of range [0, " + examples.size() + ") for data set " + source);
    }
    return examples.get((int) index);
  }

  /** The examples with indices {@code [from, to)}. */
  public List<PreferenceExample> slice(long from, long to) {
    if (from < 0 || to > examples.size() || from > to) {
      throw new IndexOutOfBoundsException(
          "slice [" + from + ", " + to + ") outside [0, " + examples.size() + ")");
    }
    return examples.subList((int) from, (int) to);
  }
}
