package org.tensorcache.launch;

import picocli.CommandLine.Option;

/**
 * Options of the built-in demo model (a seeded tiny LSTM on bytes) and its seeded synthetic data
 * set; a job on a model directory of the user's takes none of them.
 */
final class BuiltInModelOptions {
  /** Examples per forward pass of the built-in model by default. */
  static final int DEFAULT_MICRO_BATCH = 64;

  @Option(
      names = "--hidden",
      paramLabel = "N",
      defaultValue = "128",
      description = "LSTM size (default: ${DEFAULT-VALUE}).")
  int hidden;

  @Option(
      names = "--layers",
      paramLabel = "N",
      defaultValue = "2",
      description = "LSTM layers (default: ${DEFAULT-VALUE}).")
  int layers;

  @Option(
      names = "--embed",
      paramLabel = "N",
      defaultValue = "64",
      description = "Embedding size (default: ${DEFAULT-VALUE}).")
  int embed;

  @Option(
      names = "--max-seq-len",
      paramLabel = "N",
      defaultValue = "512",
      description = "Longest prompt+response in tokens (default: ${DEFAULT-VALUE}).")
  int maxSeqLen;

  @Option(
      names = "--model-seed",
      paramLabel = "SEED",
      defaultValue = "7",
      description = "Seed of the reference model's weights (default: ${DEFAULT-VALUE}).")
  int modelSeed;

  @Option(
      names = "--examples",
      paramLabel = "N",
      defaultValue = "20000",
      description =
          "Size of the synthetic data set, used without --dataset (default: ${DEFAULT-VALUE}).")
  int examples;

  @Option(
      names = "--data-seed",
      paramLabel = "SEED",
      defaultValue = "42",
      description = "Seed of the synthetic data set (default: ${DEFAULT-VALUE}).")
  long dataSeed;

  @Option(
      names = "--micro-batch",
      paramLabel = "N",
      description =
          "Examples per forward pass (default: "
              + DEFAULT_MICRO_BATCH
              + "). A model of yours packs passes by --batch-tokens instead.")
  Integer microBatch;

  /** The micro-batch: as given, or the default. */
  int microBatch() {
    return microBatch == null ? DEFAULT_MICRO_BATCH : microBatch;
  }
}
