package org.tensorcache.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.repository.zoo.ZooModel;
import ai.djl.training.ParameterStore;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A causal LM's output head traced on its own ({@code head.pt}): {@code float [N, H] -> float [N,
 * V]}, the last hidden states of {@code N} positions to their logits, with whatever the model does
 * after its head (logit scaling, soft-capping). Applied only at the positions whose log-probs are
 * summed, a few at a time, so a wide vocabulary never needs logits for every token. The forward
 * pass may be called from several threads at once.
 */
public final class TracedHead implements AutoCloseable {
  private final ZooModel<NDList, NDList> model;
  private final Path file;
  private final int hidden;
  private final int width;

  private TracedHead(ZooModel<NDList, NDList> model, Path file, int hidden, int width) {
    this.model = model;
    this.file = file;
    this.hidden = hidden;
    this.width = width;
  }

  /**
   * Loads {@code file} and probes it with one position of {@code hidden} zeros: the output must be
   * float {@code [1, V]} with {@code V >= minWidth} (the tokenizer's ids), else an error naming the
   * file and the shapes.
   */
  public static TracedHead load(Path file, int hidden, int minWidth) throws IOException {
    ZooModel<NDList, NDList> model = TorchScriptModel.loadTraced(file);
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try (NDManager scope = model.getNDManager().newSubManager()) {
      NDArray y;
      try {
        y = forward(model, scope, scope.zeros(new Shape(1, hidden)));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            file
                + " failed on a [1, "
                + hidden
                + "] input, expected an output head traced from"
                + " forward(hidden_states [N, H]) -> logits [N, V]: "
                + e.getMessage(),
            e);
      }
      Shape shape = y.getShape();
      if (y.getDataType() != DataType.FLOAT32
          || shape.dimension() != 2
          || shape.get(0) != 1
          || shape.get(1) < minWidth) {
        throw new IllegalArgumentException(
            String.format(
                "%s returned %s %s for a [1, %d] input, expected float32 [1, V] logits with V >="
                    + " the tokenizer's %d ids",
                file, y.getDataType(), shape, hidden, minWidth));
      }
      return new TracedHead(model, file, hidden, Math.toIntExact(shape.get(1)));
    } catch (RuntimeException e) {
      model.close();
      throw e;
    } finally {
      JniUtils.setGradMode(grad);
    }
  }

  private static NDArray forward(ZooModel<NDList, NDList> model, NDManager scope, NDArray in) {
    return model
        .getBlock()
        .forward(new ParameterStore(scope, false), new NDList(in), false)
        .singletonOrThrow();
  }

  /**
   * The logits {@code [N, V]} of {@code hidden} {@code [N, H]}, in {@code scope}'s memory. Call
   * with gradients off.
   */
  public NDArray forward(NDManager scope, NDArray hiddenStates) {
    NDArray y = forward(model, scope, hiddenStates);
    y.attach(scope);
    Shape got = y.getShape();
    long n = hiddenStates.getShape().get(0);
    if (got.dimension() != 2 || got.get(0) != n || got.get(1) != width) {
      throw new IllegalStateException(
          file
              + " returned "
              + got
              + " for ["
              + n
              + ", "
              + hidden
              + "], expected ["
              + n
              + ", "
              + width
              + "]");
    }
    return y;
  }

  /** The vocabulary: the width of the logits. */
  public int width() {
    return width;
  }

  /** The hidden size the head takes. */
  public int hidden() {
    return hidden;
  }

  @Override
  public void close() {
    model.close();
  }
}
