package org.tensorcache.model.usermodel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.tensorcache.fields.DType;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.batch.BudgetSettings;
import org.tensorcache.model.batch.MemoryModel;
import org.tensorcache.model.batch.TokenBudget;
import org.tensorcache.model.batch.TokenBudgetPlanner;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.HfTokenizer;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TracedHead;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.EncoderMeanRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerIdentity;

/**
 * A user's model directory with what a cache job on it needs: the tokenizer, the data set turned
 * into checked token rows, and runners that share one loaded model (loaded on first use).
 */
public final class UserModel implements AutoCloseable {
  /** What is computed with the model. */
  public enum Runner {
    /** TRL's reference log-probs of chosen and rejected completions, on a causal LM. */
    LOGPROB("causal-lm", TorchScriptModel.Output.LOGITS),
    /** The masked mean of an encoder's last hidden states. */
    EMBEDDING("hidden-states", TorchScriptModel.Output.HIDDEN_STATES);

    private final String task;
    private final TorchScriptModel.Output output;

    Runner(String task, TorchScriptModel.Output output) {
      this.task = task;
      this.output = output;
    }

    /** The task a model directory must be exported for. */
    String task() {
      return task;
    }

    /** The name on the command line. */
    public String cliName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a command-line name, naming the accepted ones otherwise. */
    public static Runner parse(String name) {
      for (Runner r : values()) {
        if (r.cliName().equals(name)) {
          return r;
        }
      }
      throw new IllegalArgumentException(
          "runner '" + name + "' unknown, expected logprob or embedding");
    }
  }

  private final ModelDirectory dir;
  private final HfTokenizer tokenizer;
  private final Runner runner;
  private final Truncation truncation;
  private final DType dtype;
  private final BudgetSettings settings;
  private TorchScriptModel model;
  private TracedHead head;

  private UserModel(
      ModelDirectory dir,
      HfTokenizer tokenizer,
      Runner runner,
      Truncation truncation,
      DType dtype,
      BudgetSettings settings) {
    this.dir = dir;
    this.tokenizer = tokenizer;
    this.runner = runner;
    this.truncation = truncation;
    this.dtype = dtype;
    this.settings = settings;
  }

  /** Opens {@code modelDir} for {@code runner}; the model file is loaded only when first used. */
  public static UserModel open(Path modelDir, Runner runner, Truncation truncation)
      throws IOException {
    return open(modelDir, runner, truncation, DType.F32);
  }

  /**
   * Like {@link #open(Path, Runner, Truncation)}; an embedding is stored as {@code dtype} (F32, F16
   * or BF16), log-probs are always F32 (and token counts I32).
   */
  public static UserModel open(Path modelDir, Runner runner, Truncation truncation, DType dtype)
      throws IOException {
    return open(modelDir, runner, truncation, dtype, BudgetSettings.DEFAULT);
  }

  /**
   * Like {@link #open(Path, Runner, Truncation, DType)}, with forward passes packed under {@code
   * settings}' token budget and memory bound.
   */
  public static UserModel open(
      Path modelDir, Runner runner, Truncation truncation, DType dtype, BudgetSettings settings)
      throws IOException {
    ModelDirectory dir = ModelDirectory.open(modelDir);
    UserModelIdentity.check(dir, runner, dtype);
    return new UserModel(
        dir, HfTokenizer.load(dir.tokenizerFile()), runner, truncation, dtype, settings);
  }

  /**
   * The rows the runner takes, tokenized and checked: text rows tokenized as TRL does, token rows
   * as they are. Any row the model cannot take, or whose forward pass alone would pass the memory
   * bound, stops it here, before anything is computed.
   */
  public ExampleSet prepare(ExampleSet raw) {
    return new RowPreparation(dir, tokenizer, runner, truncation, budget()).prepare(raw);
  }

  /** The token budget and memory bound forward passes are packed under, for this model. */
  public TokenBudget budget() {
    MemoryModel.Output output =
        runner == Runner.EMBEDDING
            ? MemoryModel.Output.HIDDEN_STATES
            : dir.splitHead() ? MemoryModel.Output.SPLIT_HEAD : MemoryModel.Output.FULL_LOGITS;
    int vocab = dir.vocabSize() > 0 ? dir.vocabSize() : tokenizer.vocabSize();
    // a directory that does not say its sizes is estimated as a mid-sized model
    int hidden = dir.hiddenSize() > 0 ? dir.hiddenSize() : 1024;
    return settings.budget(
        MemoryModel.of(output, hidden, dir.attentionHeads(), dir.intermediateSize(), vocab));
  }

  /**
   * How a range's rows are grouped for computing: by length, under the token budget; a pure
   * function of the rows and the settings.
   */
  public BatchPlanner planner() {
    Function<Example, int[]> lengths =
        runner == Runner.LOGPROB
            ? e -> CausalLmLogprobRunner.sequenceLengths(e, truncation)
            : e ->
                new int[] {
                  Example.as(TokenizedDocument.class, e, EncoderMeanRunner.ID).ids().length
                };
    return new TokenBudgetPlanner(budget(), lengths);
  }

  /**
   * How log-probs are computed with this directory, and for a format-1 directory how to get the
   * faster path.
   */
  public String pathDescription() {
    if (runner == Runner.EMBEDDING) {
      return "hidden states (model.pt)";
    }
    return dir.splitHead()
        ? "output head at completion positions only (body.pt + head.pt)"
        : "logits at every position (one model.pt, format 1): slower, and more memory per token;"
            + " export the model again with scripts/export_hf_model.py (format 2: body.pt +"
            + " head.pt) for the output head at completion positions only";
  }

  /** How many prepared rows TRL would drop (prompt alone fills the length): stored as 0 tokens. */
  public long droppedRows(ExampleSet prepared) {
    if (runner != Runner.LOGPROB) {
      return 0;
    }
    return prepared.examples().stream()
        .filter(e -> truncation.dropsPrompt(((TokenizedPreference) e).promptIds().length))
        .count();
  }

  /** Everything besides the model file and the data that decides the values. */
  public Map<String, String> parameters(DataFormat format) throws IOException {
    return UserModelIdentity.parameters(dir, runner, truncation, settings, format);
  }

  /**
   * What this model computes for rows of {@code format}: from the directory's files, and an
   * embedding's width from the loaded model when the directory does not record it.
   */
  public RunnerIdentity identity(DataFormat format) throws IOException {
    int width = runner == Runner.EMBEDDING && dir.hiddenSize() <= 0 ? outputWidth() : -1;
    return width > 0
        ? UserModelIdentity.of(dir, runner, truncation, dtype, settings, format, width)
        : UserModelIdentity.of(dir, runner, truncation, dtype, settings, format);
  }

  /**
   * The loaded model (the body of a format-2 directory), shared by every runner of this process;
   * loaded on first call.
   */
  public synchronized TorchScriptModel model() throws IOException {
    if (model == null) {
      if (runner == Runner.LOGPROB && dir.splitHead()) {
        TorchScriptModel body =
            TorchScriptModel.load(
                dir.bodyFile(), TorchScriptModel.Output.HIDDEN_STATES, tokenizer.vocabSize());
        try {
          head = TracedHead.load(dir.headFile(), body.width(), tokenizer.vocabSize());
        } catch (RuntimeException e) {
          body.close();
          throw e;
        }
        model = body;
      } else {
        model = TorchScriptModel.load(dir.modelFile(), runner.output, tokenizer.vocabSize());
      }
    }
    return model;
  }

  /**
   * The width of the model's output: the vocabulary of a causal LM, the hidden size of an encoder.
   */
  public synchronized int outputWidth() throws IOException {
    TorchScriptModel m = model();
    return head != null ? head.width() : m.width();
  }

  /** A runner over the shared model; one per compute thread. */
  public ModelRunner newRunner(DataFormat format) throws IOException {
    String digest = dir.modelDigest();
    Map<String, String> parameters = parameters(format);
    int pad = dir.padTokenId();
    TorchScriptModel m = model();
    TokenBudget budget = budget();
    if (runner == Runner.EMBEDDING) {
      return new EncoderMeanRunner(m, digest, parameters, pad, budget, dtype);
    }
    return head != null
        ? CausalLmLogprobRunner.splitHead(m, head, digest, parameters, truncation, pad, budget)
        : CausalLmLogprobRunner.fullLogits(m, digest, parameters, truncation, pad, budget);
  }

  /** The model directory. */
  public ModelDirectory directory() {
    return dir;
  }

  /** The tokenizer. */
  public HfTokenizer tokenizer() {
    return tokenizer;
  }

  /** What is computed. */
  public Runner runner() {
    return runner;
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
