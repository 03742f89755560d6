package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.usermodel.UserModel;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import picocli.CommandLine.Option;

/** Options of a job on the user's own model directory (scripts/export_hf_model.py makes one). */
final class UserModelOptions {
  @Option(
      names = "--model-dir",
      paramLabel = "DIR",
      description =
          "Your model directory (scripts/export_hf_model.py): model.pt and tokenizer.json;"
              + " needs --dataset. Default: the built-in tiny model.")
  Path modelDir;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      description =
          "Rows of --dataset: text ({\"prompt\",\"chosen\",\"rejected\"}), tokens"
              + " ({\"prompt_ids\",\"chosen_ids\",\"rejected_ids\"}) or document ({\"text\"});"
              + " default: detected from the first row.")
  String format;

  @Option(
      names = "--max-length",
      defaultValue = "1024",
      description =
          "Cut prompt+completion to this many tokens as TRL does; 0 cuts nothing"
              + " (default: ${DEFAULT-VALUE}, TRL's).")
  int maxLength;

  @Option(
      names = "--truncation-mode",
      defaultValue = "keep_start",
      description = "keep_start or keep_end, as TRL's truncation_mode (default: ${DEFAULT-VALUE}).")
  String truncationMode;

  @Option(
      names = "--runner",
      defaultValue = "logprob",
      description =
          "logprob (TRL's reference log-probs, causal LM) or embedding (mean of an encoder's"
              + " hidden states) (default: ${DEFAULT-VALUE}).")
  String runner;

  @Option(
      names = "--dtype",
      defaultValue = "F32",
      description =
          "How the embedding runner stores each vector: F32, F16 or BF16 (rounded to nearest"
              + " even, half the memory and disk); logprob keeps F32 (default: ${DEFAULT-VALUE}).")
  String dtype;

  /** Whether the job runs on a user's model. */
  boolean given() {
    return modelDir != null;
  }

  /** Rejects the user-model options when no model directory is given. */
  void checkUnused() {
    if (!"logprob".equals(runner)
        || !"F32".equals(dtype)
        || maxLength != 1024
        || !"keep_start".equals(truncationMode)
        || (format != null && !format.equals("text"))) {
      throw new IllegalArgumentException(
          "--runner, --dtype, --max-length, --truncation-mode and --format "
              + format
              + " need --model-dir DIR (the built-in model reads text rows only)");
    }
  }

  /** The data set format as forced, or null to detect it. */
  DataFormat dataFormat() {
    return format == null ? null : DataFormat.parse(format);
  }

  /**
   * Opens the model directory and the data set, checks every row and derives the cache; the model
   * file is loaded here once (its output is probed) and shared by the node's runners.
   */
  Job prepare(JobOptions job) throws IOException {
    if (job.dataset == null) {
      throw new IllegalArgumentException("--model-dir needs --dataset FILE (JSONL, plain or .gz)");
    }
    if (!Files.isRegularFile(job.dataset)) {
      throw new IllegalArgumentException("data set " + job.dataset + " is not a file");
    }
    Truncation truncation = new Truncation(maxLength, Truncation.Mode.parse(truncationMode));
    UserModel user =
        UserModel.open(modelDir, UserModel.Runner.parse(runner), truncation, DType.parse(dtype));
    ModelDirectory dir = user.directory();
    ExampleSet raw = ExampleSet.load(job.dataset, dataFormat());
    ExampleSet rows = user.prepare(raw);
    System.out.printf(
        "data set %s: %d %s rows, every row fits %s (%s, tokenizer of %d ids)%n",
        job.dataset,
        rows.size(),
        raw.format().cliName(),
        dir,
        dir.architecture(),
        user.tokenizer().vocabSize());
    long dropped = user.droppedRows(rows);
    if (dropped > 0) {
      System.out.printf(
          "  %d rows have a prompt of %d tokens or more: TRL drops them; they are kept with 0"
              + " completion tokens and log-prob 0%n",
          dropped, maxLength);
    }
    System.out.printf(
        "loading %s (%d MB) on %s...%n",
        dir.modelFile(),
        Files.size(dir.modelFile()) >> 20,
        org.tensorcache.model.lm.TinyLm.device());
    long t0 = System.nanoTime();
    TorchScriptModel model = user.model();
    System.out.printf(
        "loaded in %.1f s on %s: output width %d%n",
        (System.nanoTime() - t0) / 1e9, model.device(), model.width());
    try (ModelRunner runner = user.newRunner(job.microBatch, raw.format())) {
      CacheSpec spec = new CacheSpec(job.cacheName, rows.size(), runner.fields(), job.rangeSize);
      Fingerprint fingerprint = CacheDefinition.fingerprint(runner, rows, spec);
      Path cacheDir = job.dataDir.resolve(fingerprint.cacheId());
      job.writeManifest(cacheDir, runner, rows, spec, fingerprint);
      CacheDefinition definition =
          new CacheDefinition(
              spec,
              fingerprint,
              rows,
              () -> newRunner(user, job.microBatch, raw.format()),
              cacheDir.resolve("segments"),
              job.microBatch);
      return new Job(rows, spec, fingerprint, cacheDir, definition);
    }
  }

  private static ModelRunner newRunner(UserModel user, int microBatch, DataFormat format) {
    try {
      return user.newRunner(microBatch, format);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
