package org.tensorcache.model.usermodel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.batch.TokenBudgetPlanner;
import org.tensorcache.model.data.CompletionExample;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.hf.HfTokenizer;
import org.tensorcache.model.hf.InvalidRowException;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.RowChecks;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TracedHead;
import org.tensorcache.model.hf.TrlTokenization;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.model.runner.TopKTeacherRunner;

/**
 * A user's causal LM as a distillation teacher: its directory, tokenizer and options (top-K,
 * temperature, truncation, budget), the data set turned into checked token rows, and teacher
 * runners sharing one loaded model (loaded on first use).
 */
public final class TeacherModel implements AutoCloseable {
  private final ModelDirectory dir;
  private final HfTokenizer tokenizer;
  private final int k;
  private final float temperature;
  private final Truncation truncation;
  private final BudgetSettings settings;
  private TorchScriptModel model;
  private TracedHead head;

  private TeacherModel(
      ModelDirectory dir,
      HfTokenizer tokenizer,
      int k,
      float temperature,
      Truncation truncation,
      BudgetSettings settings) {
    this.dir = dir;
    this.tokenizer = tokenizer;
    this.k = k;
    this.temperature = temperature;
    this.truncation = truncation;
    this.settings = settings;
  }

  /**
   * Opens {@code modelDir} (a causal LM exported by {@code scripts/export_hf_model.py}, either
   * format) as a teacher of the top {@code k} log-probs of {@code log_softmax(logits /
   * temperature)}, rows cut as TRL's SFT trainer cuts them by {@code truncation}, passes packed
   * under {@code settings}. Refuses a {@code k} outside {@code [1, V]} and a temperature that is
   * not positive and finite before anything is loaded; the model is loaded on first use.
   */
  public static TeacherModel open(
      Path modelDir, int k, float temperature, Truncation truncation, BudgetSettings settings)
      throws IOException {
    ModelDirectory dir = ModelDirectory.open(modelDir);
    if (dir.task() != null && !dir.task().equals("causal-lm")) {
      throw new IllegalArgumentException(
          String.format(
              "%s was exported as task '%s', a teacher needs a model exported as 'causal-lm'"
                  + " (scripts/export_hf_model.py --task causal-lm)",
              dir, dir.task()));
    }
    HfTokenizer tokenizer = HfTokenizer.load(dir.tokenizerFile());
    try {
      int vocab = dir.vocabSize() > 0 ? dir.vocabSize() : tokenizer.vocabSize();
      TopKTeacherRunner.checkOptions(k, temperature, vocab);
    } catch (RuntimeException e) {
      tokenizer.close();
      throw e;
    }
    return new TeacherModel(dir, tokenizer, k, temperature, truncation, settings);
  }

  /**
   * The rows the teacher takes, tokenized and checked: prompt-completion text rows tokenized as
   * TRL's SFT trainer does, {@code {"input_ids", "completion_mask"}} rows as they are (messages
   * rows come through {@code scripts/prepare_dataset.py}). A row the model cannot take, with no
   * completion token left after truncation, or whose pass alone would pass the memory bound stops
   * it here, naming the row, before anything is computed.
   */
  public ExampleSet prepare(ExampleSet raw) {
    String source = raw.source().toString();
    RowChecks checks = new RowChecks(source, tokenizer.vocabSize(), dir.maxPositions());
    TrlTokenization trl =
        raw.format() == DataFormat.COMPLETION
            ? new TrlTokenization(tokenizer, dir.eosToken())
            : null;
    TokenBudget budget = budget();
    List<Example> rows = new ArrayList<>(raw.size());
    for (Example e : raw.examples()) {
      TokenizedCompletion row;
      if (e instanceof CompletionExample c && trl != null) {
        row = trl.tokenize(c);
      } else if (e instanceof TokenizedCompletion t) {
        row = t;
      } else {
        throw new IllegalArgumentException(
            String.format(
                "%s has %s rows (row %d), a teacher takes {\"prompt\", \"completion\"} text rows"
                    + " or {\"input_ids\", \"completion_mask\"} rows",
                source, raw.format().cliName(), e.index()));
      }
      checks.check(row, truncation);
      int length = TopKTeacherRunner.sequenceLength(row, truncation, source);
      long bytes = budget.aloneBytes(length);
      if (bytes > budget.memoryBound()) {
        throw new InvalidRowException(
            source,
            row.index(),
            String.format(
                "a sequence of %d tokens needs about %s for its forward pass alone, more than the"
                    + " memory bound of %s: raise --memory-bound or cut rows with --max-length",
                length, TokenBudget.mib(bytes), TokenBudget.mib(budget.memoryBound())));
      }
      rows.add(row);
    }
    return raw.withExamples(rows, DataFormat.COMPLETION_TOKENS);
  }

  /** The token budget and memory bound forward passes are packed under, for this model. */
  public TokenBudget budget() {
    MemoryModel.Output output =
        dir.splitHead() ? MemoryModel.Output.SPLIT_HEAD : MemoryModel.Output.FULL_LOGITS;
    int vocab = dir.vocabSize() > 0 ? dir.vocabSize() : tokenizer.vocabSize();
    int hidden = dir.hiddenSize() > 0 ? dir.hiddenSize() : 1024;
    return settings.budget(
        MemoryModel.of(output, hidden, dir.attentionHeads(), dir.intermediateSize(), vocab));
  }

  /** How a range's prepared rows are grouped for computing: by length, under the token budget. */
  public BatchPlanner planner() {
    return new TokenBudgetPlanner(
        budget(),
        e -> new int[] {TopKTeacherRunner.sequenceLength(e, truncation, dir.path().toString())});
  }

  /** Everything besides the model file and the data that decides the values. */
  public Map<String, String> parameters(DataFormat format) throws IOException {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("tokenizer_sha256", dir.tokenizerDigest());
    p.put("data_format", format.cliName());
    p.put("top_k", Integer.toString(k));
    p.put("temperature", String.format(Locale.ROOT, "%s", temperature));
    p.put("truncation", truncation.describe());
    p.put("model_format", dir.splitHead() ? "split-head" : "logits");
    if (format == DataFormat.COMPLETION) {
      p.put("eos_token", dir.eosToken());
    }
    p.put("batch_tokens", Integer.toString(settings.batchTokens()));
    p.put("memory_bound", Long.toString(settings.memoryBound()));
    return p;
  }

  /**
   * What this teacher computes for rows of {@code format}, from the directory's files and the
   * options, without loading the model: what a cache id is derived from.
   */
  public RunnerIdentity identity(DataFormat format) throws IOException {
    return new RunnerIdentity(
        TopKTeacherRunner.ID,
        TopKTeacherRunner.VERSION,
        dir.modelDigest(),
        parameters(format),
        TopKTeacherRunner.fields(k));
  }

  /** A teacher runner over the shared model (loaded on first call); one per compute thread. */
  public synchronized TopKTeacherRunner newRunner(DataFormat format) throws IOException {
    if (model == null) {
      load();
    }
    return new TopKTeacherRunner(
        model,
        head,
        dir.modelDigest(),
        parameters(format),
        truncation,
        dir.padTokenId(),
        budget(),
        k,
        temperature);
  }

  private void load() throws IOException {
    int vocab = tokenizer.vocabSize();
    if (!dir.splitHead()) {
      model = TorchScriptModel.load(dir.modelFile(), TorchScriptModel.Output.LOGITS, vocab);
      return;
    }
    TorchScriptModel body =
        TorchScriptModel.load(dir.bodyFile(), TorchScriptModel.Output.HIDDEN_STATES, vocab);
    try {
      head = TracedHead.load(dir.headFile(), body.width(), vocab);
    } catch (RuntimeException e) {
      body.close();
      throw e;
    }
    model = body;
  }

  /** The tokenizer. */
  public HfTokenizer tokenizer() {
    return tokenizer;
  }

  @Override
  public synchronized void close() {
    tokenizer.close();
    if (model != null) {
      model.close();
    }
    if (head != null) {
      head.close();
    }
  }
}
