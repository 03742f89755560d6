package org.tensorcache.model.usermodel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.DocumentExample;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.TokenizedDocument;
import org.tensorcache.model.data.TokenizedPreference;
import org.tensorcache.model.hf.HfTokenizer;
import org.tensorcache.model.hf.ModelDirectory;
import org.tensorcache.model.hf.RowChecks;
import org.tensorcache.model.hf.TorchScriptModel;
import org.tensorcache.model.hf.TrlTokenization;
import org.tensorcache.model.hf.Truncation;
import org.tensorcache.model.runner.CausalLmLogprobRunner;
import org.tensorcache.model.runner.EncoderMeanRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.spec.DType;

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
  private TorchScriptModel model;

  private UserModel(
      ModelDirectory dir,
      HfTokenizer tokenizer,
      Runner runner,
      Truncation truncation,
      DType dtype) {
    this.dir = dir;
    this.tokenizer = tokenizer;
    this.runner = runner;
    this.truncation = truncation;
    this.dtype = dtype;
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
    if (runner == Runner.LOGPROB && dtype != DType.F32) {
      throw new IllegalArgumentException(
          "dtype " + dtype + " for runner logprob, expected F32: log-probs are kept in full");
    }
    if (runner == Runner.EMBEDDING && !dtype.isFloating()) {
      throw new IllegalArgumentException(
          "dtype " + dtype + " for runner embedding, expected F32, F16 or BF16");
    }
    ModelDirectory dir = ModelDirectory.open(modelDir);
    if (dir.task() != null && !dir.task().equals(runner.task)) {
      throw new IllegalArgumentException(
          String.format(
              "%s was exported as task '%s', runner '%s' needs a model exported as '%s'"
                  + " (scripts/export_hf_model.py --task %s)",
              dir.modelFile(), dir.task(), runner.cliName(), runner.task, runner.task));
    }
    return new UserModel(dir, HfTokenizer.load(dir.tokenizerFile()), runner, truncation, dtype);
  }

  /**
   * The rows the runner takes, tokenized and checked: text rows tokenized as TRL does, token rows
   * as they are. Any row the model cannot take stops it here, before anything is computed.
   */
  public ExampleSet prepare(ExampleSet raw) {
    String source = raw.source().toString();
    RowChecks checks = new RowChecks(source, tokenizer.vocabSize(), dir.maxPositions());
    List<Example> rows = new ArrayList<>(raw.size());
    if (runner == Runner.LOGPROB) {
      TrlTokenization trl =
          raw.format() == DataFormat.TEXT ? new TrlTokenization(tokenizer, dir.eosToken()) : null;
      for (Example e : raw.examples()) {
        TokenizedPreference row;
        if (e instanceof PreferenceExample p && trl != null) {
          row = trl.tokenize(p);
        } else if (e instanceof TokenizedPreference t) {
          row = t;
        } else {
          throw wrongRows(raw, e);
        }
        checks.check(row, truncation);
        rows.add(row);
      }
    } else {
      for (Example e : raw.examples()) {
        if (!(e instanceof DocumentExample d)) {
          throw wrongRows(raw, e);
        }
        TokenizedDocument row = TrlTokenization.tokenize(d, tokenizer);
        checks.check(row);
        rows.add(row);
      }
    }
    return raw.withExamples(rows, raw.format());
  }

  private IllegalArgumentException wrongRows(ExampleSet raw, Example e) {
    String expected =
        runner == Runner.LOGPROB
            ? "text {\"prompt\", \"chosen\", \"rejected\"} or tokens {\"prompt_ids\", \"chosen_ids\","
                + " \"rejected_ids\"} rows"
            : "{\"text\"} rows";
    return new IllegalArgumentException(
        String.format(
            "%s has %s rows (row %d), runner '%s' takes %s",
            raw.source(), raw.format().cliName(), e.index(), runner.cliName(), expected));
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
    Map<String, String> p = new LinkedHashMap<>();
    p.put("tokenizer_sha256", dir.tokenizerDigest());
    p.put("data_format", format.cliName());
    if (runner == Runner.LOGPROB) {
      p.put("truncation", truncation.describe());
      if (format == DataFormat.TEXT) {
        p.put("eos_token", dir.eosToken());
      }
    }
    return p;
  }

  /** The loaded model, shared by every runner of this process; loaded on first call. */
  public synchronized TorchScriptModel model() throws IOException {
    if (model == null) {
      model = TorchScriptModel.load(dir.modelFile(), runner.output, tokenizer.vocabSize());
    }
    return model;
  }

  /** A runner over the shared model; one per compute thread. */
  public ModelRunner newRunner(int microBatch, DataFormat format) throws IOException {
    String digest = dir.modelDigest();
    Map<String, String> parameters = parameters(format);
    int pad = dir.padTokenId();
    return runner == Runner.LOGPROB
        ? new CausalLmLogprobRunner(model(), digest, parameters, truncation, pad, microBatch)
        : new EncoderMeanRunner(model(), digest, parameters, pad, microBatch, dtype);
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
  }
}
