package org.tensorcache.model.hf;

import ai.djl.Device;
import ai.djl.MalformedModelException;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.repository.zoo.Criteria;
import ai.djl.repository.zoo.ModelNotFoundException;
import ai.djl.repository.zoo.ZooModel;
import ai.djl.training.ParameterStore;
import ai.djl.translate.NoopTranslator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A traced Hugging Face model, {@code (input_ids, attention_mask) -> float [B, T, W]}, loaded
 * offline through DJL's PyTorch engine on the device DJL picks (the first GPU when there is one).
 * {@code W} is the vocabulary for a causal LM's logits, the hidden size for an encoder's states.
 * The model is probed once at load; the forward pass may be called from several threads at once.
 */
public final class TorchScriptModel implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TorchScriptModel.class);

  /** What the traced model returns. */
  public enum Output {
    /** Next-token logits over the vocabulary. */
    LOGITS,
    /** The last layer's hidden states. */
    HIDDEN_STATES
  }

  private final ZooModel<NDList, NDList> model;
  private final Path file;
  private final int width;

  private TorchScriptModel(ZooModel<NDList, NDList> model, Path file, int width) {
    this.model = model;
    this.file = file;
    this.width = width;
  }

  /**
   * Loads {@code file} and probes it with a 1x2 input: the output must be float {@code [1, 2, W]},
   * with {@code W >= minWidth} for logits (the tokenizer's vocabulary), else an error naming the
   * file and the shapes.
   */
  public static TorchScriptModel load(Path file, Output output, int minWidth) throws IOException {
    long t0 = System.nanoTime();
    ZooModel<NDList, NDList> model = loadTraced(file);
    try {
      int width = probe(model, file, output, minWidth);
      log.debug(
          "loaded {} ({} MB) on {} in {} ms: {} of width {}",
          file,
          Files.size(file) >> 20,
          model.getNDManager().getDevice(),
          (System.nanoTime() - t0) / 1_000_000,
          output,
          width);
      return new TorchScriptModel(model, file, width);
    } catch (RuntimeException e) {
      model.close();
      throw e;
    }
  }

  /** Loads a TorchScript file offline on the device DJL picks, naming the file on failure. */
  static ZooModel<NDList, NDList> loadTraced(Path file) throws IOException {
    Device device = Engine.getEngine("PyTorch").defaultDevice();
    Criteria<NDList, NDList> criteria =
        Criteria.builder()
            .setTypes(NDList.class, NDList.class)
            // the directory and the file's base name: DJL then loads it without a warning
            .optModelPath(file.toAbsolutePath().getParent())
            .optModelName(file.getFileName().toString().replaceFirst("\\.pt$", ""))
            .optEngine("PyTorch")
            .optDevice(device)
            .optTranslator(new NoopTranslator())
            .build();
    try {
      return criteria.loadModel();
    } catch (ModelNotFoundException | MalformedModelException | RuntimeException e) {
      throw new IllegalArgumentException(
          file + " could not be loaded as TorchScript: " + e.getMessage(), e);
    }
  }

  private static int probe(ZooModel<NDList, NDList> model, Path file, Output output, int minWidth) {
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try (NDManager scope = model.getNDManager().newSubManager()) {
      long id = Math.min(1, Math.max(0, minWidth - 1));
      NDArray ids = scope.create(new long[] {id, id}, new Shape(1, 2));
      NDArray mask = scope.create(new long[] {1, 1}, new Shape(1, 2));
      NDList out;
      try {
        out =
            model
                .getBlock()
                .forward(new ParameterStore(scope, false), new NDList(ids, mask), false);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            file
                + " failed on a 1x2 input (input_ids, attention_mask), expected a model traced from"
                + " forward(input_ids, attention_mask): "
                + e.getMessage(),
            e);
      }
      String expected =
          output == Output.LOGITS
              ? "float32 [1, 2, V] logits with V >= the tokenizer's " + minWidth + " ids"
              : "float32 [1, 2, H] hidden states";
      if (out.size() != 1) {
        throw new IllegalArgumentException(
            file + " returned " + out.size() + " tensors for a 1x2 input, expected " + expected);
      }
      NDArray y = out.singletonOrThrow();
      Shape shape = y.getShape();
      boolean ok =
          y.getDataType() == DataType.FLOAT32
              && shape.dimension() == 3
              && shape.get(0) == 1
              && shape.get(1) == 2
              && (output == Output.HIDDEN_STATES || shape.get(2) >= minWidth);
      if (!ok) {
        throw new IllegalArgumentException(
            file
                + " returned "
                + y.getDataType()
                + " "
                + shape
                + " for a 1x2 input, expected "
                + expected);
      }
      return Math.toIntExact(shape.get(2));
    } finally {
      JniUtils.setGradMode(grad);
    }
  }

  /**
   * The model's output {@code [rows, steps, W]} for right-padded {@code ids} and {@code mask}
   * (row-major {@code rows x steps}), in {@code scope}'s memory. Call with gradients off.
   */
  public NDArray forward(NDManager scope, long[] ids, long[] mask, int rows, int steps) {
    Shape shape = new Shape(rows, steps);
    NDList in = new NDList(scope.create(ids, shape), scope.create(mask, shape));
    NDArray y =
        model.getBlock().forward(new ParameterStore(scope, false), in, false).singletonOrThrow();
    Shape got = y.getShape();
    if (got.dimension() != 3 || got.get(0) != rows || got.get(1) != steps || got.get(2) != width) {
      throw new IllegalStateException(
          file
              + " returned "
              + got
              + " for "
              + shape
              + ", expected ["
              + rows
              + ", "
              + steps
              + ", "
              + width
              + "]");
    }
    return y;
  }

  /** The manager the model's weights live in; runners take sub-scopes of it. */
  public NDManager manager() {
    return model.getNDManager();
  }

  /** The last dimension of the output: vocabulary or hidden size. */
  public int width() {
    return width;
  }

  /** The device the model runs on. */
  public Device device() {
    return model.getNDManager().getDevice();
  }

  @Override
  public void close() {
    model.close();
  }
}
