package org.tensorcache.launch;

import picocli.CommandLine.Option;

/** Options of a distillation teacher's cache ({@code --runner topk}): K, temperature, exactness. */
final class TeacherOptions {
  @Option(
      names = "--top-k",
      paramLabel = "K",
      description =
          "With --runner topk: how many of the teacher's next-token ids to keep per completion"
              + " token, 1 to the model's vocabulary size.")
  Integer k;

  @Option(
      names = "--temperature",
      paramLabel = "T",
      description =
          "With --runner topk: the log-probs kept are log_softmax(logits / T) (default: 1).")
  Float temperature;

  @Option(
      names = "--exact",
      description =
          "With --runner topk: keep the log-probs as float32, about 2.6 times the bytes of the"
              + " default compact form (whose KL from them is about 4e-4 nats per token).")
  boolean exact;

  /** K, checked to be given; its range is checked against the model's vocabulary later. */
  int k() {
    if (k == null) {
      throw new IllegalArgumentException("--runner topk needs --top-k K (e.g. --top-k 64)");
    }
    return k;
  }

  /** The temperature, 1 unless given. */
  float temperature() {
    return temperature == null ? 1f : temperature;
  }

  /** Rejects the teacher's options on a job of another runner. */
  void checkUnused(String runner) {
    if (k != null || temperature != null || exact) {
      throw new IllegalArgumentException(
          "--top-k, --temperature and --exact are options of --runner topk, not of --runner "
              + runner);
    }
  }
}
