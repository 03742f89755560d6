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
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/** What decides a cache: data set, model and layout; makes the seeded ones when missing. */
public final class JobOptions {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  @ArgGroup(validate = false, heading = "Your model and data set:%n", order = 1)
  UserModelOptions userModel = new UserModelOptions();

  @ArgGroup(validate = false, heading = "The cache:%n", order = 2)
  CacheOptions cache = new CacheOptions();

  @ArgGroup(
      validate = false,
      heading = "The built-in demo model (without --model-dir) and its synthetic data set:%n",
      order = 3)
  BuiltInModelOptions builtIn = new BuiltInModelOptions();

  /** Where the cache lives and how it is laid out. */
  static final class CacheOptions {
    @Option(
        names = "--data-dir",
        paramLabel = "DIR",
        defaultValue = "data",
        description = "Where data sets, models and caches live (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(
        names = "--range-size",
        paramLabel = "N",
        defaultValue = "1024",
        description = "Examples per range and segment (default: ${DEFAULT-VALUE}).")
    int rangeSize;

    @Option(
        names = "--cache-name",
        paramLabel = "NAME",
        defaultValue = "dpo-ref",
        description = "Cache name (default: ${DEFAULT-VALUE}).")
    String cacheName;

    @Option(
        names = "--segments",
        paramLabel = "LOCATION",
        description = {
          "Where segments are kept: a directory shared by the nodes, or S3-compatible object"
              + " storage as s3://BUCKET[/PREFIX]; each cache under its id. Default: beside the"
              + " cache in --data-dir (DIR/CACHE-ID/segments).",
          "With object storage, --data-dir keeps only verified copies, and a node with an empty"
              + " --data-dir restores every range from the bucket. Credentials come from the AWS"
              + " default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, an instance"
              + " or pod role)."
        })
    String segments;

    @Option(
        names = "--s3-endpoint",
        paramLabel = "URL",
        description =
            "Base URL of an S3-compatible server (MinIO, S3Proxy, GCS's XML API ...), e.g."
                + " http://minio:9000; without it, AWS S3 (tensorcache.object-storage.endpoint,"
                + " AWS_ENDPOINT_URL_S3).")
    String s3Endpoint;

    @Option(
        names = "--s3-region",
        paramLabel = "REGION",
        description =
            "Region requests are signed for (default: AWS_REGION, else us-east-1; S3-compatible"
                + " servers take any).")
    String s3Region;
  }

  /** Where this job's segments are kept ({@code --segments}, {@code --s3-*}), checked. */
  public SegmentPlace segmentPlace() {
    return SegmentPlace.of(cache.segments, cache.s3Endpoint, cache.s3Region);
  }

  /** Where data sets, models and caches live ({@code --data-dir}). */
  public Path dataDir() {
    return cache.dataDir;
  }

  /** The data set: the given file, or the seeded synthetic one (made when missing). */
  ExampleSet dataset() throws IOException {
    Path file = userModel.dataset;
    if (file == null) {
      long seed = builtIn.dataSeed;
      int examples = builtIn.examples;
      file =
          dataDir().resolve("datasets").resolve("synthetic-s" + seed + "-n" + examples + ".jsonl");
      if (!Files.exists(file)) {
        System.out.printf("making data set %s (%d examples, seed %d)%n", file, examples, seed);
        SyntheticPreferences.write(file, seed, examples);
      }
    } else if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("data set " + file + " is not a file");
    }
    return ExampleSet.load(file, DataFormat.TEXT);
  }

  /** The reference model of these sizes and seed, made and saved when missing. */
  TinyLm model() throws IOException {
    BuiltInModelOptions b = builtIn;
    LmConfig config =
        new LmConfig(ByteTokenizer.VOCAB_SIZE, b.embed, b.hidden, b.layers, b.modelSeed);
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
    BuiltInModelOptions b = builtIn;
    return dataDir()
        .resolve("models")
        .resolve(String.format("tinylm-e%d-h%d-l%d-s%d", b.embed, b.hidden, b.layers, b.modelSeed));
  }

  /** A reference log-prob runner over a fresh copy of the saved model. */
  ModelRunner newRunner() {
    try {
      return new ReferenceLogprobRunner(TinyLm.load(modelDir()), microBatch(), builtIn.maxSeqLen);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Makes or loads the data set and the model and derives the cache: spec, fingerprint, and the
   * definition a node registers (its runners load the saved model, one per compute thread).
   */
  public Job prepare() throws IOException {
    segmentPlace(); // a malformed --segments fails before any model loads
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
              .put("rows_sha256", data.textRowsDigest())
              .map();
      Path cacheDir = dataDir().resolve(fingerprint.cacheId());
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
      return new Job(data, spec, fingerprint, cacheDir, segmentPlace().apply(definition));
    }
  }

  /** The built-in model's micro-batch. */
  int microBatch() {
    return builtIn.microBatch();
  }

  CacheSpec spec(ModelRunner runner, ExampleSet data) {
    return new CacheSpec(cache.cacheName, data.size(), runner.fields(), cache.rangeSize);
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
