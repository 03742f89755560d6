package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.model.usermodel.UserModel;
import org.tensorcache.model.usermodel.UserModelIdentity;
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
              + " ({\"prompt_ids\",\"chosen_ids\",\"rejected_ids\"}), document ({\"text\"}),"
              + " or for --runner topk completion ({\"prompt\",\"completion\"}) and"
              + " completion_tokens ({\"input_ids\",\"completion_mask\"}; messages rows go"
              + " through scripts/prepare_dataset.py); default: detected from the first row.")
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
          "logprob (TRL's reference log-probs, causal LM), embedding (mean of an encoder's"
              + " hidden states) or topk (a distillation teacher: the top-K log-probs of every"
              + " completion token; see --top-k) (default: ${DEFAULT-VALUE}).")
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
              + " raise it with the memory bound). Part of the cache id: the passes decide the"
              + " bits.")
  int batchTokens = TokenBudget.DEFAULT_BATCH_TOKENS;

  @Option(
      names = "--memory-bound",
      paramLabel = "SIZE",
      description =
          "Most working memory one forward pass may take beyond the weights, e.g. 512m, 2g:"
              + " passes are packed and the output head chunked to stay under it; a row that"
              + " cannot fit alone is refused before any compute (default: 2g). Part of the cache"
              + " id.")
  String memoryBound = "2g";

  /** The token budget settings, checked. */
  BudgetSettings budgetSettings() {
    OptionRanges.atLeast("--batch-tokens", batchTokens, TokenBudget.STEP_MULTIPLE);
    long bound;
    try {
      bound = BudgetSettings.parseBytes(memoryBound);
    } catch (IllegalArgumentException e) {
      throw OptionRanges.invalid(
          "--memory-bound", memoryBound, "a positive number of bytes or e.g. 512m, 2g");
    }
    if (bound < (1L << 20)) {
      throw OptionRanges.invalid("--memory-bound", memoryBound, "at least 1m (1 MiB)");
    }
    return new BudgetSettings(batchTokens, bound);
  }

  /** The truncation, checked. */
  Truncation truncation() {
    if (maxLength != 0 && maxLength < 2) {
      throw OptionRanges.invalid("--max-length", maxLength, "0 (no truncation) or >= 2");
    }
    return new Truncation(maxLength, Truncation.Mode.parse(truncationMode));
  }

  /** Whether the job is a distillation teacher's ({@code --runner topk}). */
  boolean teacher() {
    return TeacherJobs.RUNNER.equals(runner);
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

  /** The data set file, checked. */
  Path datasetFile() {
    if (dataset == null) {
      throw new IllegalArgumentException("--model-dir needs --dataset FILE (JSONL, plain or .gz)");
    }
    if (!Files.isRegularFile(dataset)) {
      throw new IllegalArgumentException("data set " + dataset + " is not a file");
    }
    return dataset;
  }

  /**
   * The cache of these options, from the digests of the model directory's files and the data set
   * and the settings: neither the model nor the tokenizer is loaded, nothing is written.
   */
  CacheIdentity identify(JobOptions job) throws IOException {
    if (teacher()) {
      return TeacherJobs.identify(job, this, job.teacher);
    }
    job.teacher.checkUnused(runner);
    Truncation truncation = truncation();
    BudgetSettings settings = budgetSettings();
    Path file = datasetFile();
    ModelDirectory dir = ModelDirectory.open(modelDir);
    UserModel.Runner kind = UserModel.Runner.parse(runner);
    DType type = DType.parse(dtype);
    ExampleSet raw = ExampleSet.load(file, dataFormat());
    return job.identity(
        UserModelIdentity.of(dir, kind, truncation, type, settings, raw.format()),
        kind.cliName(),
        raw,
        in -> inputs(in, dir, kind, raw));
  }

  /**
   * Opens the model directory and the data set, checks every row and derives the cache; the model
   * file is loaded here once (its output is probed) and shared by the node's runners.
   */
  Job prepare(JobOptions job) throws IOException {
    job.teacher.checkUnused(runner);
    Truncation truncation = truncation();
    BudgetSettings settings = budgetSettings();
    Path file = datasetFile();
    UserModel user =
        UserModel.open(
            modelDir, UserModel.Runner.parse(runner), truncation, DType.parse(dtype), settings);
    ModelDirectory dir = user.directory();
    ExampleSet raw = ExampleSet.load(file, dataFormat());
    ExampleSet rows = user.prepare(raw);
    System.out.printf(
        "data set %s: %d %s rows, every row fits %s (%s, tokenizer of %d ids)%n",
        file,
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
    RunnerIdentity identity = user.identity(raw.format());
    CacheIdentity id =
        job.identity(
            identity, user.runner().cliName(), raw, in -> inputs(in, dir, user.runner(), raw));
    try (ModelRunner runner = user.newRunner(raw.format())) {
      identity.check(runner);
    }
    return job.job(id, rows, () -> newRunner(user, raw.format()), user.planner());
  }

  /**
   * What a trainer checks: the rows' content (digested here for text rows, copied from a prepared
   * file's header), the model's and tokenizer's digests (the exporter's, when it recorded them),
   * and the truncation and passes the values were computed with.
   */
  private RecordedInputs inputs(
      RecordedInputs inputs, ModelDirectory dir, UserModel.Runner kind, ExampleSet raw)
      throws IOException {
    inputs
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
    if (kind == UserModel.Runner.LOGPROB) {
      inputs
          .put("max_length", Integer.toString(maxLength))
          .put("truncation_mode", truncationMode)
          .put("eos_token", dir.eosToken());
    }
    return inputs;
  }

  private static ModelRunner newRunner(UserModel user, DataFormat format) {
    try {
      return user.newRunner(format);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
