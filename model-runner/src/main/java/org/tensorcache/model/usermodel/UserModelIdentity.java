package org.tensorcache.model.usermodel;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.EncoderMeanRunner;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.model.runner.TorchScriptRunner;

/**
 * What decides the values computed with a user's model directory, known from its files and the
 * settings without loading the model or the tokenizer: what a cache id is derived from.
 */
public final class UserModelIdentity {
  private UserModelIdentity() {}

  /**
   * The identity of {@code runner} over {@code dir} for rows of {@code format}; an embedding's
   * width is the hidden size the directory records. Throws, naming the file, when it records none
   * (only loading the model tells it then: {@link UserModel#identity} does).
   */
  public static RunnerIdentity of(
      ModelDirectory dir,
      UserModel.Runner runner,
      Truncation truncation,
      DType dtype,
      BudgetSettings settings,
      DataFormat format)
      throws IOException {
    if (runner == UserModel.Runner.EMBEDDING && dir.hiddenSize() <= 0) {
      throw new IllegalArgumentException(
          String.format(
              "%s/%s records no hidden_size, expected it for the embedding's width without"
                  + " loading the model (scripts/export_hf_model.py writes it)",
              dir, ModelDirectory.INFO_FILE));
    }
    return of(dir, runner, truncation, dtype, settings, format, dir.hiddenSize());
  }

  /**
   * As {@link #of(ModelDirectory, UserModel.Runner, Truncation, DType, BudgetSettings,
   * DataFormat)}, an embedding {@code width} wide.
   */
  static RunnerIdentity of(
      ModelDirectory dir,
      UserModel.Runner runner,
      Truncation truncation,
      DType dtype,
      BudgetSettings settings,
      DataFormat format,
      int width)
      throws IOException {
    check(dir, runner, dtype);
    List<FieldSpec> fields =
        runner == UserModel.Runner.EMBEDDING
            ? EncoderMeanRunner.fields(dtype, width)
            : CausalLmLogprobRunner.FIELDS;
    String id =
        runner == UserModel.Runner.EMBEDDING ? EncoderMeanRunner.ID : CausalLmLogprobRunner.ID;
    return new RunnerIdentity(
        id,
        TorchScriptRunner.VERSION,
        dir.modelDigest(),
        parameters(dir, runner, truncation, settings, format),
        fields);
  }

  /**
   * Refuses a {@code dtype} the runner does not store, and a directory exported for another task
   * than the runner's, naming both.
   */
  static void check(ModelDirectory dir, UserModel.Runner runner, DType dtype) {
    if (runner == UserModel.Runner.LOGPROB && dtype != DType.F32) {
      throw new IllegalArgumentException(
          "dtype " + dtype + " for runner logprob, expected F32: log-probs are kept in full");
    }
    if (runner == UserModel.Runner.EMBEDDING && !dtype.isFloating()) {
      throw new IllegalArgumentException(
          "dtype " + dtype + " for runner embedding, expected F32, F16 or BF16");
    }
    if (dir.task() != null && !dir.task().equals(runner.task())) {
      throw new IllegalArgumentException(
          String.format(
              "%s was exported as task '%s', runner '%s' needs a model exported as '%s'"
                  + " (scripts/export_hf_model.py --task %s)",
              dir, dir.task(), runner.cliName(), runner.task(), runner.task()));
    }
  }

  /** Everything besides the model file and the data that decides the values. */
  static Map<String, String> parameters(
      ModelDirectory dir,
      UserModel.Runner runner,
      Truncation truncation,
      BudgetSettings settings,
      DataFormat format)
      throws IOException {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("tokenizer_sha256", dir.tokenizerDigest());
    p.put("data_format", format.cliName());
    if (runner == UserModel.Runner.LOGPROB) {
      p.put("truncation", truncation.describe());
      p.put("model_format", dir.splitHead() ? "split-head" : "logits");
      if (format == DataFormat.TEXT) {
        p.put("eos_token", dir.eosToken());
      }
    }
    // the passes a row is computed in decide its bits
    p.put("batch_tokens", Integer.toString(settings.batchTokens()));
    p.put("memory_bound", Long.toString(settings.memoryBound()));
    return p;
  }
}
