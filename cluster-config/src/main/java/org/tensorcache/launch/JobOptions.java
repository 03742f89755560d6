package org.tensorcache.launch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.RowsDigest;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** What decides a cache: data set, model and layout; makes the seeded ones when missing. */
public final class JobOptions {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  @Option(
      names = "--data-dir",
      defaultValue = "data",
      description = "Where data sets, models and caches live (default: ${DEFAULT-VALUE}).")
  Path dataDir;

  @Option(
      names = "--dataset",
      paramLabel = "FILE",
      description =
          "Your own JSONL file, plain or .gz ({\"prompt\",\"chosen\",\"rejected\"} per line, or"
              + " see --format); default: a seeded synthetic set.")
  Path dataset;

  @Mixin UserModelOptions userModel;

  @Option(
      names = "--examples",
      defaultValue = "20000",
      description = "Size of the synthetic data set (default: ${DEFAULT-VALUE}).")
  int examples;

  @Option(
      names = "--data-seed",
      defaultValue = "42",
      description = "Seed of the synthetic data set (default: ${DEFAULT-VALUE}).")
  long dataSeed;

  @Option(
      names = "--model-seed",
      defaultValue = "7",
      description = "Seed of the reference model's weights (default: ${DEFAULT-VALUE}).")
  int modelSeed;

  @Option(
      names = "--embed",
      defaultValue = "64",
      description = "Embedding size (default: ${DEFAULT-VALUE}).")
  int embed;

  @Option(
      names = "--hidden",
      defaultValue = "128",
      description = "LSTM size (default: ${DEFAULT-VALUE}).")
  int hidden;

  @Option(
      names = "--layers",
      defaultValue = "2",
      description = "LSTM layers (default: ${DEFAULT-VALUE}).")
  int layers;

  @Option(
      names = "--max-seq-len",
      defaultValue = "512",
      description = "Longest prompt+response in tokens (default: ${DEFAULT-VALUE}).")
  int maxSeqLen;

  @Option(
      names = "--range-size",
      defaultValue = "1024",
      description = "Examples per range and segment (default: ${DEFAULT-VALUE}).")
  int rangeSize;

  @Option(
      names = "--micro-batch",
      description =
          "Built-in model: examples per forward pass (default: "
              + DEFAULT_MICRO_BATCH
              + "). A model of yours packs passes by --batch-tokens instead.")
  Integer microBatch;

  /** Examples per forward pass of the built-in model by default. */
  static final int DEFAULT_MICRO_BATCH = 64;

  @Option(
      names = "--cache-name",
      defaultValue = "dpo-ref",
      description = "Cache name (default: ${DEFAULT-VALUE}).")
  String cacheName;

  /** Where data sets, models and caches live ({@code --data-dir}). */
  public Path dataDir() {
    return dataDir;
  }

  /** The data set: the given file, or the seeded synthetic one (made when missing). */
  ExampleSet dataset() throws IOException {
    Path file = dataset;
    if (file == null) {
      file =
          dataDir
              .resolve("datasets")
              .resolve("synthetic-s" + dataSeed + "-n" + examples + ".jsonl");
      if (!Files.exists(file)) {
        System.out.printf("making data set %s (%d examples, seed %d)%n", file, examples, dataSeed);
        SyntheticPreferences.write(file, dataSeed, examples);
      }
    } else if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("data set " + file + " is not a file");
    }
    return ExampleSet.load(file, DataFormat.TEXT);
  }

  /** The reference model of these sizes and seed, made and saved when missing. */
  TinyLm model() throws IOException {
    LmConfig config = new LmConfig(ByteTokenizer.VOCAB_SIZE, embed, hidden, layers, modelSeed);
    Path dir = modelDir();
    if (TinyLm.exists(dir)) {
      return TinyLm.load(dir);
    }
    System.out.printf("making reference model %s%n", dir);
    TinyLm lm = TinyLm.create(config);
    lm.save(dir);
    return lm;
  }

  /** Where the reference model of these sizes and seed is saved. */
  public Path modelDir() {
    return dataDir
        .resolve("models")
        .resolve(String.format("tinylm-e%d-h%d-l%d-s%d", embed, hidden, layers, modelSeed));
  }

  /** A reference log-prob runner over a fresh copy of the saved model. */
  ModelRunner newRunner() {
    try {
      return new ReferenceLogprobRunner(TinyLm.load(modelDir()), microBatch(), maxSeqLen);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Makes or loads the data set and the model and derives the cache: spec, fingerprint, and the
   * definition a node registers (its runners load the saved model, one per compute thread).
   */
  public Job prepare() throws IOException {
    if (userModel.given()) {
      return userModel.prepare(this);
    }
    userModel.checkUnused();
    ExampleSet data = dataset();
    model().close();
    try (ModelRunner runner = newRunner()) {
      CacheSpec spec = spec(runner, data);
      Fingerprint fingerprint = CacheDefinition.fingerprint(runner, data, spec);
      Map<String, String> inputs =
          RecordedInputs.of(runner, "builtin", data, spec, fingerprint)
              .put("data_format", data.format().cliName())
              .put("rows_sha256", RowsDigest.ofPreferences(data.preferences()))
              .map();
      Path cacheDir = dataDir.resolve(fingerprint.cacheId());
      writeManifest(cacheDir, runner, data, spec, fingerprint, inputs);
      CacheDefinition definition =
          new CacheDefinition(
                  spec,
                  fingerprint,
                  data,
                  this::newRunner,
                  cacheDir.resolve("segments"),
                  microBatch())
              .withInputs(inputs);
      return new Job(data, spec, fingerprint, cacheDir, definition);
    }
  }

  /** The built-in model's micro-batch. */
  int microBatch() {
    return microBatch == null ? DEFAULT_MICRO_BATCH : microBatch;
  }

  CacheSpec spec(ModelRunner runner, ExampleSet data) {
    return new CacheSpec(cacheName, data.size(), runner.fields(), rangeSize);
  }

  /**
   * Writes what the cache was made from, for people reading the data directory; {@code inputs}
   * under {@code "inputs"}, as a trainer checks them.
   */
  void writeManifest(
      Path cacheDir,
      ModelRunner runner,
      ExampleSet data,
      CacheSpec spec,
      Fingerprint fp,
      Map<String, String> inputs)
      throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cache_id", fp.cacheId());
    m.put("fingerprint", fp.hex());
    m.put("runner", runner.id() + "/" + runner.version());
    m.put("weights_sha256", runner.weightsDigest());
    m.put("dataset", data.source().toString());
    m.put("dataset_sha256", data.digest());
    m.put("parameters", runner.parameters());
    m.put("n", spec.n());
    m.put("range_size", spec.rangeSize());
    m.put("fields", spec.fields().stream().map(Object::toString).toList());
    m.put("inputs", inputs);
    Files.createDirectories(cacheDir);
    Path tmp = Files.createTempFile(cacheDir, ".tmp-", ".json");
    JSON.writeValue(tmp.toFile(), m);
    Files.move(
        tmp,
        cacheDir.resolve("cache.json"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }
}
