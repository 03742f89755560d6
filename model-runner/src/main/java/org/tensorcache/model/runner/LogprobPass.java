package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import java.util.List;
import org.tensorcache.model.hf.Truncation;

/** One way of computing a forward pass's log-prob sums. */
interface LogprobPass {
  /**
   * Per sequence of {@code pass} (each with at least one counted token), the sum of the counted
   * tokens' log-probs, computed in {@code scope}'s memory.
   */
  float[] sums(List<Truncation.Sequence> pass, NDManager scope);

  /** What the path is, for the fill's output. */
  String describe();
}
