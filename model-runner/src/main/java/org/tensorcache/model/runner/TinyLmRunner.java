package org.tensorcache.model.runner;

import ai.djl.ndarray.NDManager;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;

/** The common part of runners over the built-in {@link TinyLm}, which reads text rows. */
public abstract class TinyLmRunner extends MicroBatchedRunner {
  protected final TinyLm lm;
  protected final int maxSeqLen;

  protected TinyLmRunner(TinyLm lm, int microBatch, int maxSeqLen) {
    super(microBatch);
    if (maxSeqLen < 4) {
      throw new IllegalArgumentException("max_seq_len " + maxSeqLen + " invalid, expected >= 4");
    }
    this.lm = lm;
    this.maxSeqLen = maxSeqLen;
  }

  @Override
  public String weightsDigest() {
    return lm.weightsDigest();
  }

  @Override
  public Map<String, String> parameters() {
    return parameters(lm.config(), maxSeqLen);
  }

  /** The parameters of a runner over a model of {@code config} that reads {@code maxSeqLen}. */
  static Map<String, String> parameters(LmConfig config, int maxSeqLen) {
    Map<String, String> p = new LinkedHashMap<>(config.asParameters());
    p.put("max_seq_len", Integer.toString(maxSeqLen));
    return p;
  }

  @Override
  protected NDManager manager() {
    return lm.manager();
  }

  @Override
  public void close() {
    lm.close();
  }
}
