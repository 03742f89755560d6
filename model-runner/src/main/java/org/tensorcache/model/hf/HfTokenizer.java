package org.tensorcache.model.hf;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * A Hugging Face {@code tokenizer.json} through DJL's tokenizer, set to give the ids Python's
 * {@code tokenizer(text)} gives: special tokens added as the file's post-processor says, and no
 * truncation (DJL's default silently cuts at 512 tokens).
 */
public final class HfTokenizer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HuggingFaceTokenizer tokenizer;
  private final int vocabSize;
  private final Path file;

  private HfTokenizer(HuggingFaceTokenizer tokenizer, int vocabSize, Path file) {
    this.tokenizer = tokenizer;
    this.vocabSize = vocabSize;
    this.file = file;
  }

  /** Loads {@code tokenizer.json}. */
  public static HfTokenizer load(Path file) throws IOException {
    HuggingFaceTokenizer t =
        HuggingFaceTokenizer.newInstance(
            file, Map.of("addSpecialTokens", "true", "truncation", "false", "padding", "false"));
    return new HfTokenizer(t, vocabSizeOf(file), file);
  }

  /** The ids of {@code text} with special tokens, as Python's {@code tokenizer(text)}. */
  public int[] encode(String text) {
    return toInts(tokenizer.encode(text).getIds());
  }

  /** The ids of {@code text} without special tokens. */
  public int[] encodePlain(String text) {
    return toInts(tokenizer.encode(text, false, false).getIds());
  }

  private int[] toInts(long[] ids) {
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = Math.toIntExact(ids[i]);
    }
    return out;
  }

  /** One more than the largest id of the vocabulary and the added tokens. */
  public int vocabSize() {
    return vocabSize;
  }

  /** The file it was loaded from. */
  public Path file() {
    return file;
  }

  private static int vocabSizeOf(Path file) throws IOException {
    JsonNode root = JSON.readTree(file.toFile());
    int max = -1;
    JsonNode vocab = root.path("model").path("vocab");
    if (vocab.isObject()) {
      for (JsonNode id : (Iterable<JsonNode>) vocab::elements) {
        max = Math.max(max, id.asInt());
      }
    } else if (vocab.isArray()) {
      max = vocab.size() - 1; // unigram models: a list of [piece, score]
    }
    for (JsonNode added : root.path("added_tokens")) {
      max = Math.max(max, added.path("id").asInt());
    }
    if (max < 0) {
      throw new IllegalArgumentException(file + " has no vocabulary (model.vocab is empty)");
    }
    return max + 1;
  }

  @Override
  public void close() {
    tokenizer.close();
  }
}
