package org.tensorcache.model.usermodel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.hf.Truncation;

/**
 * The committed fixtures of {@code scripts/make_test_models.py}: tiny seeded Llama, GPT-2 and
 * encoder model directories, data sets, and the values TRL 1.13 itself computed for them.
 */
final class Fixtures {
  static final Path DIR = Path.of("src/test/resources/byo");
  private static final ObjectMapper JSON = new ObjectMapper();

  private Fixtures() {}

  static JsonNode json(String name) throws IOException {
    return JSON.readTree(DIR.resolve(name).toFile());
  }

  /**
   * One case of {@code expected.json}: a model, a data set, truncation settings and TRL's rows;
   * {@code dir} names another export of the same model (its body and head traced apart), or is
   * null.
   */
  record Case(JsonNode node, String dir) {
    Case(JsonNode node) {
      this(node, null);
    }

    String name() {
      return node.get("name").textValue() + (dir == null ? "" : " (" + dir + ")");
    }

    Path modelDir() {
      return DIR.resolve(dir != null ? dir : node.get("model").textValue());
    }

    /** The file the Java side reads: conversational rows as the preparation script wrote them. */
    Path dataset() {
      if (node.get("format").textValue().equals("conversational")) {
        return DIR.resolve("data/conversational." + node.get("model").textValue() + ".jsonl");
      }
      return DIR.resolve(node.get("dataset").textValue());
    }

    DataFormat format() {
      return node.get("format").textValue().equals("text") ? DataFormat.TEXT : DataFormat.TOKENS;
    }

    Truncation truncation() {
      JsonNode max = node.get("max_length");
      return new Truncation(
          max == null || max.isNull() ? 0 : max.intValue(),
          Truncation.Mode.parse(node.get("truncation_mode").textValue()));
    }

    JsonNode rows() {
      return node.get("rows");
    }
  }

  static Iterable<Case> cases() throws IOException {
    java.util.List<Case> out = new java.util.ArrayList<>();
    json("expected.json").get("cases").forEach(c -> out.add(new Case(c)));
    return out;
  }

  /**
   * The cases on models exported with the body and the head apart: every case of a model that has
   * such an export, on that export, and the wide-vocabulary cases.
   */
  static java.util.List<Case> splitCases() throws IOException {
    JsonNode expected = json("expected.json");
    JsonNode dirs = expected.get("split_dirs");
    java.util.List<Case> out = new java.util.ArrayList<>();
    for (JsonNode c : expected.get("cases")) {
      JsonNode dir = dirs.get(c.get("model").textValue());
      if (dir != null) {
        out.add(new Case(c, dir.textValue()));
      }
    }
    expected.get("split_cases").forEach(c -> out.add(new Case(c)));
    return out;
  }

  static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).intValue();
    }
    return out;
  }

  /** TRL's tolerance here: float32 rounding of sums, 1e-4 relative above 1. */
  static double tolerance(double expected) {
    return 1e-4 * Math.max(1, Math.abs(expected));
  }
}
