package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
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

/**
 * Options of a job on the user's own model directory (scripts/export_hf_model.py makes one), and
 * the data set (which the built-in model takes too).
 */
final class UserModelOptions {
  @Option(
      names = "--model-dir",
      paramLabel = "DIR",
      description =
          "Your model directory (scripts/export_hf_model.py): body.pt + head.pt (or model.pt)"
              + " and tokenizer.json; needs --dataset. Default: the built-in tiny model.")
  Path modelDir;

  @Option(
      names = "--dataset",
      paramLabel = "FILE",
      description =
          "Your own JSONL file, plain or .gz ({\"prompt\",\"chosen\",\"rejected\"} per line, or"
              + " see --format; Parquet, Arrow and datasets folders go through"
              + " scripts/prepare_dataset.py first); default: a seeded synthetic set.")
  Path dataset;

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
      paramLabel = "N",
      defaultValue = "1024",
      description =
          "Cut prompt+completion to this many tokens as TRL does; 0 cuts nothing"
              + " (default: ${DEFAULT-VALUE}, TRL's).")
  int maxLength;

  @Option(
      names = "--truncation-mode",
      paramLabel = "MODE",
      defaultValue = "keep_start",
      description = "keep_start or keep_end, as TRL's truncation_mode (default: ${DEFAULT-VALUE}).")
  String truncationMode;

  @Option(
      names = "--runner",
      paramLabel = "RUNNER",
      defaultValue = "logprob",
      description =
          "logprob (TRL's reference log-probs, causal LM) or embedding (mean of an encoder's"
              + " hidden states) (default: ${DEFAULT-VALUE}).")
  String runner;

  @Option(
      names = "--dtype",
      paramLabel = "DTYPE",
      defaultValue = "F32",
      description =
          "How the embedding runner stores each vector: F32, F16 or BF16 (rounded to nearest"
              + " even, half the memory and disk); logprob keeps F32 (default: ${DEFAULT-VALUE}).")
  String dtype;

  @Option(
      names = "--batch-tokens",
      paramLabel = "N",
      description =
          "Padded tokens per forward pass: a range's sequences are sorted by length and packed"
              + " under it (default: ${DEFAULT-VALUE}, the fastest measured on CPU; on a GPU,"
              + " raise it with the memory bound).")
  int batchTokens = TokenBudget.DEFAULT_BATCH_TOKENS;

  @Option(
      names = "--memory-bound",
      paramLabel = "SIZE",
      description =
          "Most working memory one forward pass may take beyond the weights, e.g. 512m, 2g:"
              + " passes are packed and the output head chunked to stay under it; a row that"
              + " cannot fit alone is refused before any compute (default: 2g).")
  String memoryBound = "2g";

  /** The token budget settings. */
  BudgetSettings budgetSettings() {
    return new BudgetSettings(batchTokens, BudgetSettings.parseBytes(memoryBound));
  }

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
        || batchTokens != TokenBudget.DEFAULT_BATCH_TOKENS
        || !"2g".equals(memoryBound)
        || (format != null && !format.equals("text"))) {
      throw new IllegalArgumentException(
          "--runner, --dtype, --max-length, --truncation-mode, --batch-tokens, --memory-bound"
              + " and --format "
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
    if (dataset == null) {
      throw new IllegalArgumentException("--model-dir needs --dataset FILE (JSONL, plain or .gz)");
    }
    if (job.builtIn.microBatch != null) {
      throw new IllegalArgumentException(
          "--micro-batch "
              + job.builtIn.microBatch
              + " is the built-in model's; with --model-dir forward passes are packed by"
              + " --batch-tokens (and --memory-bound)");
    }
    if (!Files.isRegularFile(dataset)) {
      throw new IllegalArgumentException("data set " + dataset + " is not a file");
    }
    Truncation truncation = new Truncation(maxLength, Truncation.Mode.parse(truncationMode));
    UserModel user =
        UserModel.open(
            modelDir,
            UserModel.Runner.parse(runner),
            truncation,
            DType.parse(dtype),
            budgetSettings());
    ModelDirectory dir = user.directory();
    ExampleSet raw = ExampleSet.load(dataset, dataFormat());
    ExampleSet rows = user.prepare(raw);
    System.out.printf(
        "data set %s: %d %s rows, every row fits %s (%s, tokenizer of %d ids)%n",
        dataset,
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
        dir, dir.modelBytes() >> 20, org.tensorcache.model.lm.TinyLm.device());
    long t0 = System.nanoTime();
    TorchScriptModel model = user.model();
    System.out.printf(
        "loaded in %.1f s on %s: output width %d%n",
        (System.nanoTime() - t0) / 1e9, model.device(), user.outputWidth());
    System.out.printf(
        "forward passes: %s per compute thread (--batch-tokens, --memory-bound)%n  %s%n",
        user.budget().describe(), user.pathDescription());
    try (ModelRunner runner = user.newRunner(raw.format())) {
      CacheSpec spec =
          new CacheSpec(job.cache.cacheName, rows.size(), runner.fields(), job.cache.rangeSize);
      Fingerprint fingerprint = CacheDefinition.fingerprint(runner, rows, spec);
      Map<String, String> inputs = inputs(user, raw, runner, spec, fingerprint);
      Path cacheDir = job.dataDir().resolve(fingerprint.cacheId());
      job.writeManifest(cacheDir, runner, rows, spec, fingerprint, inputs);
      CacheDefinition definition =
          new CacheDefinition(
                  spec,
                  fingerprint,
                  rows,
                  () -> newRunner(user, raw.format()),
                  cacheDir.resolve("segments"),
                  user.planner())
              .withInputs(inputs);
      return new Job(rows, spec, fingerprint, cacheDir, job.segmentPlace().apply(definition));
    }
  }

  /**
   * What a trainer checks: the rows' content (digested here for text rows, copied from a prepared
   * file's header), the model's and tokenizer's digests (the exporter's, when it recorded them),
   * and the truncation and passes the values were computed with.
   */
  private Map<String, String> inputs(
      UserModel user, ExampleSet raw, ModelRunner runner, CacheSpec spec, Fingerprint fingerprint)
      throws IOException {
    ModelDirectory dir = user.directory();
    RecordedInputs inputs =
        RecordedInputs.of(runner, user.runner().cliName(), raw, spec, fingerprint)
            .put("data_format", raw.format().cliName())
            .fromHeader(raw)
            .put("model_dir", modelDir.toString())
            .put("tokenizer_sha256", dir.tokenizerDigest())
            .put("tokenizer_state_sha256", dir.recorded("tokenizer_state_sha256"))
            .put("model_state_sha256", dir.recorded("model_state_sha256"))
            .putIfAbsent("chat_template_sha256", dir.recorded("chat_template_sha256"))
            .put("batch_tokens", Integer.toString(batchTokens))
            .put("memory_bound", Long.toString(budgetSettings().memoryBound()));
    if (raw.format() == DataFormat.TEXT) {
      inputs.put("rows_sha256", raw.textRowsDigest());
    }
    if (user.runner() == UserModel.Runner.LOGPROB) {
      inputs
          .put("max_length", Integer.toString(maxLength))
          .put("truncation_mode", truncationMode)
          .put("eos_token", dir.eosToken());
    }
    return inputs.map();
  }

  private static ModelRunner newRunner(UserModel user, DataFormat format) {
    try {
      return user.newRunner(format);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
