package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import ai.djl.pytorch.jni.JniUtils;
import java.util.function.Function;

/** Runs native work with gradients off, in a memory scope of its own that is freed after it. */
final class NoGrad {
  private NoGrad() {}

  /**
   * Runs {@code work} in a sub-scope of {@code parent}. PyTorch's grad mode is per thread and DJL
   * turns it off only on the thread that started the engine; with it on, other threads take other
   * kernels and get other bits (and record autograd graphs for nothing). A value must not depend on
   * the thread that computes it.
   */
  static <T> T run(NDManager parent, Function<NDManager, T> work) {
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try (NDManager scope = parent.newSubManager()) {
      return work.apply(scope);
    } finally {
      JniUtils.setGradMode(grad);
    }
  }
}
