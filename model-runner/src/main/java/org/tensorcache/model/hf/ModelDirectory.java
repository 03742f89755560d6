package org.tensorcache.model.hf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A model directory as {@code scripts/export_hf_model.py} writes it: the traced model, {@code
 * tokenizer.json}, and optionally {@code tokenizer_config.json} (special tokens) and {@code
 * tensorcache-model.json} (what the exporter knew). The traced model of a causal LM is either the
 * body and the output head apart ({@code body.pt}: {@code (input_ids, attention_mask) -> hidden
 * states}, {@code head.pt}: {@code hidden states -> logits}; format 2), or one {@code model.pt}
 * returning logits (format 1, or an encoder's hidden states). A directory made by other means works
 * from the model files and the tokenizer alone.
 */
public final class ModelDirectory {
  /** The TorchScript file. */
  public static final String MODEL_FILE = "model.pt";

  /** The traced body of a causal LM in format 2: last hidden states. */
  public static final String BODY_FILE = "body.pt";

  /** The traced output head of a causal LM in format 2: hidden states to logits. */
  public static final String HEAD_FILE = "head.pt";

  /** The Hugging Face fast tokenizer. */
  public static final String TOKENIZER_FILE = "tokenizer.json";

  /** Special tokens and the chat template's settings. */
  public static final String TOKENIZER_CONFIG_FILE = "tokenizer_config.json";

  /** What the exporter knew about the model. */
  public static final String INFO_FILE = "tensorcache-model.json";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path dir;
  private final JsonNode info;
  private final JsonNode tokenizerConfig;
  private String modelDigest;
  private String tokenizerDigest;

  private ModelDirectory(Path dir, JsonNode info, JsonNode tokenizerConfig) {
    this.dir = dir;
    this.info = info;
    this.tokenizerConfig = tokenizerConfig;
  }

  /** Opens {@code dir}, with an error naming the first file that is missing or unreadable. */
  public static ModelDirectory open(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException(
          "model directory " + dir + " does not exist; make it with scripts/export_hf_model.py");
    }
    boolean split =
        Files.isRegularFile(dir.resolve(BODY_FILE)) && Files.isRegularFile(dir.resolve(HEAD_FILE));
    if (!split && !Files.isRegularFile(dir.resolve(MODEL_FILE))) {
      throw new IllegalArgumentException(
          String.format(
              "model directory %s has no model: expected %s and %s, or %s"
                  + " (scripts/export_hf_model.py writes them)",
              dir, BODY_FILE, HEAD_FILE, MODEL_FILE));
    }
    if (!Files.isRegularFile(dir.resolve(TOKENIZER_FILE))) {
      throw new IllegalArgumentException(
          "model directory "
              + dir
              + " has no "
              + TOKENIZER_FILE
              + " (scripts/export_hf_model.py writes it)");
    }
    return new ModelDirectory(
        dir, readJson(dir.resolve(INFO_FILE)), readJson(dir.resolve(TOKENIZER_CONFIG_FILE)));
  }

  private static JsonNode readJson(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      return null;
    }
    try {
      JsonNode node = JSON.readTree(file.toFile());
      if (node == null || !node.isObject()) {
        throw new IllegalArgumentException(file + " is not a JSON object");
      }
      return node;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException(file + " is not valid JSON: " + e.getOriginalMessage(), e);
    }
  }

  /** The directory. */
  public Path path() {
    return dir;
  }

  /** The single TorchScript file of format 1 (logits or an encoder's hidden states). */
  public Path modelFile() {
    return dir.resolve(MODEL_FILE);
  }

  /**
   * Whether the body and the output head are traced apart ({@code body.pt} and {@code head.pt}):
   * the head then runs only where log-probs are summed.
   */
  public boolean splitHead() {
    return Files.isRegularFile(bodyFile()) && Files.isRegularFile(headFile());
  }

  /** The traced body (format 2). */
  public Path bodyFile() {
    return dir.resolve(BODY_FILE);
  }

  /** The traced output head (format 2). */
  public Path headFile() {
    return dir.resolve(HEAD_FILE);
  }

  /** Bytes of the traced model files. */
  public long modelBytes() throws IOException {
    return splitHead() ? Files.size(bodyFile()) + Files.size(headFile()) : Files.size(modelFile());
  }

  /** The tokenizer file. */
  public Path tokenizerFile() {
    return dir.resolve(TOKENIZER_FILE);
  }

  /**
   * SHA-256 (hex) of {@code model.pt}, or of the digests of {@code body.pt} and {@code head.pt}
   * together, computed once.
   */
  public synchronized String modelDigest() throws IOException {
    if (modelDigest == null) {
      if (splitHead()) {
        String both = "body " + sha256(bodyFile()) + "\nhead " + sha256(headFile()) + "\n";
        modelDigest = sha256(both.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      } else {
        modelDigest = sha256(modelFile());
      }
    }
    return modelDigest;
  }

  /** SHA-256 (hex) of {@code tokenizer.json}, computed once. */
  public synchronized String tokenizerDigest() throws IOException {
    if (tokenizerDigest == null) {
      tokenizerDigest = sha256(tokenizerFile());
    }
    return tokenizerDigest;
  }

  /**
   * The EOS token's text, which TRL appends to text completions: from {@code tokenizer_config.json}
   * (a string or {@code {"content": ...}}), else from {@code tensorcache-model.json}, else null.
   */
  public String eosToken() {
    String fromConfig = tokenText(tokenizerConfig, "eos_token");
    return fromConfig != null ? fromConfig : tokenText(info, "eos_token");
  }

  /**
   * A string the exporter recorded in {@code tensorcache-model.json} under {@code key} (e.g. {@code
   * model_state_sha256}), or null when the directory does not say.
   */
  public String recorded(String key) {
    return info != null && info.path(key).isTextual() ? info.get(key).textValue() : null;
  }

  /** The most positions the model takes, or -1 when the directory does not say. */
  public int maxPositions() {
    return intInfo("max_positions");
  }

  /** The task the exporter traced ({@code causal-lm} or {@code hidden-states}), or null. */
  public String task() {
    return info != null && info.path("task").isTextual() ? info.get("task").textValue() : null;
  }

  /** The model's class as the exporter saw it, or {@code unknown}. */
  public String architecture() {
    return info != null && info.path("architecture").isTextual()
        ? info.get("architecture").textValue()
        : "unknown";
  }

  /** The hidden size, or -1 when the directory does not say. */
  public int hiddenSize() {
    return intInfo("hidden_size");
  }

  /** Attention heads, or -1 when the directory does not say. */
  public int attentionHeads() {
    return intInfo("num_attention_heads");
  }

  /** The MLP's inner width, or -1 when the directory does not say. */
  public int intermediateSize() {
    return intInfo("intermediate_size");
  }

  /** The model's vocabulary (the width of its logits), or -1 when the directory does not say. */
  public int vocabSize() {
    return intInfo("vocab_size");
  }

  /** The pad token's id, or -1 when the directory does not say. */
  public int padTokenId() {
    return intInfo("pad_token_id");
  }

  private int intInfo(String key) {
    return info != null && info.path(key).canConvertToInt() ? info.get(key).intValue() : -1;
  }

  private static String tokenText(JsonNode node, String key) {
    if (node == null || node.get(key) == null || node.get(key).isNull()) {
      return null;
    }
    JsonNode value = node.get(key);
    if (value.isTextual()) {
      return value.textValue();
    }
    return value.path("content").isTextual() ? value.get("content").textValue() : null;
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** SHA-256 (hex) of a file's bytes, streamed. */
  public static String sha256(Path file) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha)) {
      in.transferTo(java.io.OutputStream.nullOutputStream());
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  @Override
  public String toString() {
    return dir.toString();
  }
}
