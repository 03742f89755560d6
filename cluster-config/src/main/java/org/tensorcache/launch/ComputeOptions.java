package org.tensorcache.launch;

import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/**
 * Options of how a cache is computed that leave its values, and so its id, unchanged: taken by the
 * commands that compute ({@code node}, {@code fill}, {@code demo}), not by those that only find a
 * cache ({@code export}, {@code cache-id}).
 */
public final class ComputeOptions {
  /** Examples per forward pass of the built-in model by default. */
  static final int DEFAULT_MICRO_BATCH = 64;

  @ArgGroup(validate = false, heading = "Computing:%n", order = 4)
  Group group = new Group();

  /** The options, in a help section of their own. */
  static final class Group {
    @Option(
        names = "--micro-batch",
        paramLabel = "N",
        description =
            "Examples per forward pass of the built-in model (default: "
                + DEFAULT_MICRO_BATCH
                + "). A model of yours packs passes by --batch-tokens instead.")
    Integer microBatch;
  }

  /** The built-in model's micro-batch: as given, or the default. */
  int microBatch() {
    Integer given = group.microBatch;
    return given == null ? DEFAULT_MICRO_BATCH : OptionRanges.atLeast("--micro-batch", given, 1);
  }

  /** Refuses {@code --micro-batch} for a model of the user's, whose passes are packed by tokens. */
  void checkUserModel() {
    if (group.microBatch != null) {
      throw new IllegalArgumentException(
          "--micro-batch "
              + group.microBatch
              + " is the built-in model's; with --model-dir forward passes are packed by"
              + " --batch-tokens (and --memory-bound)");
    }
  }
}
