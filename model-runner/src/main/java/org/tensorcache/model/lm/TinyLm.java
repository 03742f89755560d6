package org.tensorcache.model.lm;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.nn.recurrent.LSTM;
import ai.djl.nn.transformer.IdEmbedding;
import ai.djl.training.ParameterStore;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A small causal language model built from DJL blocks: token embedding, stacked LSTM layers and a
 * linear head. Recurrence makes it causal by construction, so right padding never changes the
 * values at real positions. Weights are seeded, saved as DJL parameters, and digested from the
 * file's bytes.
 */
public final class TinyLm implements AutoCloseable {
  /** The engine every model here runs on. */
  public static final String ENGINE = "PyTorch";

  static final String CONFIG_FILE = "model.json";
  static final String WEIGHTS_FILE = "weights.params";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final LmConfig config;
  private final NDManager manager;
  private final SequentialBlock body;
  private final Block head;
  private final SequentialBlock all;
  private final String weightsDigest;

  private TinyLm(LmConfig config, NDManager manager, byte[] weights) throws IOException {
    this.config = config;
    this.manager = manager;
    this.body =
        new SequentialBlock()
            .add(
                new IdEmbedding.Builder()
                    .setDictionarySize(config.vocabSize())
                    .setEmbeddingSize(config.embedSize())
                    .build())
            .add(
                LSTM.builder()
                    .setStateSize(config.hiddenSize())
                    .setNumLayers(config.layers())
                    .optBatchFirst(true)
                    .build());
    this.head = Linear.builder().setUnits(config.vocabSize()).build();
    this.all = new SequentialBlock().add(body).add(head);
    if (weights == null) {
      // the engine's generator decides the initial values: seed it right before they are drawn
      Engine.getEngine(ENGINE).setRandomSeed(config.seed());
    }
    all.initialize(manager, DataType.FLOAT32, new Shape(1, 4));
    if (weights == null) {
      weights = serialize(all);
    } else {
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(weights))) {
        all.loadParameters(manager, in);
      } catch (ai.djl.MalformedModelException e) {
        throw new IOException("weights do not fit the model config " + config, e);
      }
    }
    this.weightsDigest = sha256(weights);
  }

  /** A freshly initialised model; the same config (seed included) gives the same weights. */
  public static TinyLm create(LmConfig config) {
    try {
      return new TinyLm(config, NDManager.newBaseManager(device(), ENGINE), null);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Loads a model saved by {@link #save(Path)}. */
  public static TinyLm load(Path dir) throws IOException {
    Path configFile = dir.resolve(CONFIG_FILE);
    Path weightsFile = dir.resolve(WEIGHTS_FILE);
    if (!Files.isRegularFile(configFile) || !Files.isRegularFile(weightsFile)) {
      throw new IOException(
          "no model in " + dir + ": expected " + CONFIG_FILE + " and " + WEIGHTS_FILE);
    }
    LmConfig config = JSON.readValue(configFile.toFile(), LmConfig.class);
    byte[] weights = Files.readAllBytes(weightsFile);
    return new TinyLm(config, NDManager.newBaseManager(device(), ENGINE), weights);
  }

  /**
   * A second model with this one's config and exactly its current weights, in native memory of its
   * own: training the copy leaves this model unchanged.
   */
  public TinyLm copy() {
    try {
      return new TinyLm(config, NDManager.newBaseManager(device(), ENGINE), serialize(all));
    } catch (IOException e) {
      throw new IllegalStateException("copying the weights of model " + config + " failed", e);
    }
  }

  /**
   * The {@link #weightsDigest()} of the model saved in {@code dir}, read from its weights file
   * without loading it; throws naming the files when none is saved there.
   */
  public static String savedWeightsDigest(Path dir) throws IOException {
    if (!exists(dir)) {
      throw new IOException(
          "no model in " + dir + ": expected " + CONFIG_FILE + " and " + WEIGHTS_FILE);
    }
    return sha256Of(dir.resolve(WEIGHTS_FILE));
  }

  /** The config of the model saved in {@code dir}, read without loading the model. */
  public static LmConfig savedConfig(Path dir) throws IOException {
    return JSON.readValue(dir.resolve(CONFIG_FILE).toFile(), LmConfig.class);
  }

  /** Whether {@code dir} holds a saved model. */
  public static boolean exists(Path dir) {
    return Files.isRegularFile(dir.resolve(CONFIG_FILE))
        && Files.isRegularFile(dir.resolve(WEIGHTS_FILE));
  }

  /** The device DJL picked: the first GPU when it finds CUDA, the CPU otherwise. */
  public static Device device() {
    return Engine.getEngine(ENGINE).defaultDevice();
  }

  /** Writes config and weights into {@code dir}, each atomically. */
  public void save(Path dir) throws IOException {
    Files.createDirectories(dir);
    writeAtomically(dir.resolve(CONFIG_FILE), JSON.writeValueAsBytes(config));
    writeAtomically(dir.resolve(WEIGHTS_FILE), serialize(all));
  }

  /** The last layer's hidden states, {@code (B, T, hidden)}, for token ids {@code (B, T)}. */
  public NDArray hidden(ParameterStore ps, NDArray tokens, boolean training) {
    return body.forward(ps, new NDList(tokens), training).head();
  }

  /** Next-token logits {@code (B, T, vocab)} from hidden states. */
  public NDArray logits(ParameterStore ps, NDArray hidden, boolean training) {
    return head.forward(ps, new NDList(hidden), training).head();
  }

  /** The whole network, for training. */
  public Block block() {
    return all;
  }

  /** The manager that owns the parameters. */
  public NDManager manager() {
    return manager;
  }

  /** Sizes and seed. */
  public LmConfig config() {
    return config;
  }

  /** SHA-256 (hex) of the weights file's bytes. */
  public String weightsDigest() {
    return weightsDigest;
  }

  @Override
  public void close() {
    manager.close();
  }

  private static byte[] serialize(Block block) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      block.saveParameters(out);
    }
    return bytes.toByteArray();
  }

  private static void writeAtomically(Path file, byte[] bytes) throws IOException {
    Path tmp = Files.createTempFile(file.getParent(), ".tmp-", ".part");
    try (var channel =
        java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
      channel.write(java.nio.ByteBuffer.wrap(bytes));
      channel.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** SHA-256 (hex) of a file's bytes, as {@link #weightsDigest()} takes it. */
  public static String sha256Of(Path file) throws IOException {
    return sha256(Files.readAllBytes(file));
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
