package org.tensorcache.model.data;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A data set held in memory, with the SHA-256 of its (uncompressed) bytes for fingerprints and the
 * format of its rows.
 */
public record ExampleSet(Path source, List<Example> examples, String digest, DataFormat format) {
  /** Copies the list; the data set is immutable. */
  public ExampleSet {
    examples = List.copyOf(examples);
  }

  /** A data set of text preference rows. */
  public ExampleSet(Path source, List<? extends Example> examples, String digest) {
    this(source, List.copyOf(examples), digest, DataFormat.TEXT);
  }

  /** Reads and checks every line of a JSONL file, detecting its format from the first row. */
  public static ExampleSet load(Path file) throws IOException {
    return load(file, null);
  }

  /** Reads and checks every line of a JSONL file (plain or gzip) in {@code format}, or detected. */
  public static ExampleSet load(Path file, DataFormat format) throws IOException {
    List<Example> examples = new ArrayList<>();
    try (DatasetReader reader = DatasetReader.open(file, format)) {
      while (reader.hasNext()) {
        examples.add(reader.next());
      }
      if (examples.isEmpty()) {
        throw new MalformedDataException(
            file.toString(), 1, "has no rows, expected at least one", null);
      }
      return new ExampleSet(file, examples, reader.digest(), reader.format());
    }
  }

  /** The same rows turned into others (e.g. tokenized) under the same source and digest. */
  public ExampleSet withExamples(List<? extends Example> rows, DataFormat rowsFormat) {
    return new ExampleSet(source, List.copyOf(rows), digest, rowsFormat);
  }

  /** The rows as text preference rows, or an error naming the first row of another kind. */
  public List<PreferenceExample> preferences() {
    List<PreferenceExample> out = new ArrayList<>(examples.size());
    for (Example e : examples) {
      out.add(Example.as(PreferenceExample.class, e, "text preferences of " + source));
    }
    return out;
  }

  /** Number of examples. */
  public int size() {
    return examples.size();
  }

  /** The example at {@code index}, with an error naming the valid range otherwise. */
  public Example get(long index) {
    if (index < 0 || index >= examples.size()) {
      throw new IndexOutOfBoundsException(
          "index " + index + " out of range [0, " + examples.size() + ") for data set " + source);
    }
    return examples.get((int) index);
  }

  /** The examples with indices {@code [from, to)}. */
  public List<Example> slice(long from, long to) {
    if (from < 0 || to > examples.size() || from > to) {
      throw new IndexOutOfBoundsException(
          "slice [" + from + ", " + to + ") outside [0, " + examples.size() + ")");
    }
    return examples.subList((int) from, (int) to);
  }
}
