package org.tensorcache.model.data;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A data set held in memory, with the SHA-256 of its (uncompressed) bytes for fingerprints, the
 * format of its rows, the scalar values of its header line ({@code {"tensorcache": {...}}}, as the
 * data set preparation script writes it: what the rows were made from), empty without one, and for
 * text rows read from a file their {@link RowsDigest} as read (null otherwise, see {@link
 * #textRowsDigest()}).
 */
public record ExampleSet(
    Path source,
    List<Example> examples,
    String digest,
    DataFormat format,
    Map<String, String> header,
    String rowsDigestAsRead) {
  /** Copies the list and the header; the data set is immutable. */
  public ExampleSet {
    examples = List.copyOf(examples);
    header = Collections.unmodifiableSortedMap(new TreeMap<>(header));
  }

  /** A data set whose rows were not read from JSON. */
  public ExampleSet(
      Path source,
      List<Example> examples,
      String digest,
      DataFormat format,
      Map<String, String> header) {
    this(source, examples, digest, format, header, null);
  }

  /** A data set without a header. */
  public ExampleSet(Path source, List<Example> examples, String digest, DataFormat format) {
    this(source, examples, digest, format, Map.of());
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
        throw new EmptyDataSetException(file, reader.header() != null);
      }
      return new ExampleSet(
          file,
          examples,
          reader.digest(),
          reader.format(),
          scalars(reader.header()),
          reader.textRowsDigest());
    }
  }

  /** The same rows turned into others (e.g. tokenized) under the same source and digest. */
  public ExampleSet withExamples(List<? extends Example> rows, DataFormat rowsFormat) {
    return new ExampleSet(source, List.copyOf(rows), digest, rowsFormat, header, rowsDigestAsRead);
  }

  /**
   * The {@link RowsDigest} of the text rows a trainer checks: as read from the file, with every
   * digested field a row has ({@code tools} too), or else computed from the rows held.
   */
  public String textRowsDigest() {
    return rowsDigestAsRead != null ? rowsDigestAsRead : RowsDigest.ofPreferences(preferences());
  }

  /** The header's string, number and boolean values by key; its nulls, lists and objects not. */
  private static Map<String, String> scalars(JsonNode header) {
    Map<String, String> values = new TreeMap<>();
    if (header != null) {
      for (Map.Entry<String, JsonNode> e : header.properties()) {
        if (e.getValue().isValueNode() && !e.getValue().isNull()) {
          values.put(e.getKey(), e.getValue().asText());
        }
      }
    }
    return values;
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
