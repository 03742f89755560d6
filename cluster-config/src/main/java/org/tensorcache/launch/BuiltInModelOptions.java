package org.tensorcache.launch;

import java.nio.file.Path;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.text.ByteTokenizer;
import picocli.CommandLine.Option;

/**
 * Options of the built-in demo model (a seeded tiny LSTM on bytes) and its seeded synthetic data
 * set; a job on a model directory of the user's takes none of them.
 */
final class BuiltInModelOptions {
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

  /** The model's sizes and seed, checked. */
  LmConfig config() {
    return new LmConfig(
        ByteTokenizer.VOCAB_SIZE,
        OptionRanges.between("--embed", embed, 1, 65_536),
        OptionRanges.between("--hidden", hidden, 1, 65_536),
        OptionRanges.between("--layers", layers, 2, 16),
        modelSeed);
  }

  /** The longest prompt+response, checked. */
  int maxSeqLen() {
    return OptionRanges.atLeast("--max-seq-len", maxSeqLen, 4);
  }

  /** The size of the synthetic data set, checked. */
  int examples() {
    return OptionRanges.atLeast("--examples", examples, 1);
  }

  /** Where the model of these sizes and seed is saved under {@code dataDir}. */
  Path modelDir(Path dataDir) {
    return dataDir
        .resolve("models")
        .resolve(String.format("tinylm-e%d-h%d-l%d-s%d", embed, hidden, layers, modelSeed));
  }

  /** Where the synthetic data set of this size and seed is written under {@code dataDir}. */
  Path datasetFile(Path dataDir) {
    return dataDir
        .resolve("datasets")
        .resolve("synthetic-s" + dataSeed + "-n" + examples + ".jsonl");
  }
}
