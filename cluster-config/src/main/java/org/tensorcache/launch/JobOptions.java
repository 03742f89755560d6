package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.TokenCoding;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/**
 * What decides a cache, and so its id: data set, model, layout and where its segments are kept.
 * {@link #identify} derives the id from file digests and settings alone; {@link #prepare} makes the
 * seeded data set and model when missing, loads the model and derives what a node registers.
 */
public final class JobOptions {

  @ArgGroup(validate = false, heading = "Your model and data set:%n", order = 1)
  UserModelOptions userModel = new UserModelOptions();

  @ArgGroup(validate = false, heading = "The cache:%n", order = 2)
  CacheOptions cache = new CacheOptions();

  @ArgGroup(
      validate = false,
      heading = "The built-in demo model (without --model-dir) and its synthetic data set:%n",
      order = 3)
  BuiltInModelOptions builtIn = new BuiltInModelOptions();

  @ArgGroup(validate = false, heading = "A distillation teacher (--runner topk):%n", order = 4)
  TeacherOptions teacher = new TeacherOptions();

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
        description = "Cache name (default: ${DEFAULT-VALUE}; teacher with --runner topk).")
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

  /** Whether these options decide a per-token cache (a teacher's, {@code --runner topk}). */
  public boolean perToken() {
    return userModel.given() && userModel.teacher();
  }

  /** Where data sets, models and caches live ({@code --data-dir}). */
  public Path dataDir() {
    return cache.dataDir;
  }

  /** Where the built-in reference model of these sizes and seed is saved. */
  public Path modelDir() {
    return builtIn.modelDir(dataDir());
  }

  /**
   * The cache these options identify, from the digests of the data set and model files and the
   * settings: no model is loaded and nothing is written. The built-in model and synthetic data set
   * must have been made (by {@code fill}, {@code node} or {@code demo}).
   */
  public CacheIdentity identify() throws IOException {
    return identify(false);
  }

  /**
   * As {@link #identify()}, first making the built-in model and synthetic data set when missing:
   * their digests decide the id, and only making them gives the digests.
   */
  public CacheIdentity identifyMakingInputs() throws IOException {
    return identify(true);
  }

  private CacheIdentity identify(boolean make) throws IOException {
    segmentPlace(); // a malformed option fails before anything is read
    rangeSize();
    if (userModel.given()) {
      return userModel.identify(this);
    }
    builtIn.config();
    builtIn.maxSeqLen();
    userModel.checkUnused();
    teacher.checkUnused("logprob");
    ExampleSet data = dataset(make);
    Path dir = modelDir();
    if (!TinyLm.exists(dir)) {
      if (!make) {
        throw new IllegalArgumentException(
            "no reference model in "
                + dir
                + ": expected the one fill, node or demo makes on first use with these options");
      }
      makeModel(dir);
    }
    RunnerIdentity runner =
        ReferenceLogprobRunner.identity(
            TinyLm.savedConfig(dir), TinyLm.savedWeightsDigest(dir), builtIn.maxSeqLen());
    return identity(
        runner,
        "builtin",
        data,
        in ->
            in.put("data_format", data.format().cliName())
                .put("rows_sha256", data.textRowsDigest()));
  }

  /** What a cache's inputs record beyond those of every cache. */
  @FunctionalInterface
  interface MoreInputs {
    RecordedInputs add(RecordedInputs inputs) throws IOException;
  }

  /** The identity of the cache of what {@code runner} computes for {@code data}. */
  CacheIdentity identity(RunnerIdentity runner, String kind, ExampleSet data, MoreInputs more)
      throws IOException {
    return identity(runner, TokenCoding.PLAIN, kind, data, more);
  }

  /** As {@link #identity(RunnerIdentity, String, ExampleSet, MoreInputs)}, rows coded so. */
  CacheIdentity identity(
      RunnerIdentity runner, TokenCoding coding, String kind, ExampleSet data, MoreInputs more)
      throws IOException {
    String name =
        coding instanceof TokenCoding.TopK && cache.cacheName.equals("dpo-ref")
            ? "teacher"
            : cache.cacheName;
    CacheSpec spec = new CacheSpec(name, data.size(), runner.fields(), rangeSize(), coding);
    Fingerprint fingerprint = CacheDefinition.fingerprint(runner, data, spec);
    Map<String, String> inputs =
        more.add(RecordedInputs.of(runner, kind, data, spec, fingerprint)).map();
    return new CacheIdentity(
        data, runner, spec, fingerprint, dataDir().resolve(fingerprint.cacheId()), inputs);
  }

  private int rangeSize() {
    return OptionRanges.between("--range-size", cache.rangeSize, 1, 1 << 24);
  }

  /** The data set: the given file, or the seeded synthetic one (made when missing if asked). */
  private ExampleSet dataset(boolean make) throws IOException {
    Path file = builtIn.datasetFile(dataDir());
    if (userModel.dataset != null) {
      file = userModel.dataset;
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException("data set " + file + " is not a file");
      }
    } else if (!Files.exists(file)) {
      int examples = builtIn.examples();
      if (!make) {
        throw new IllegalArgumentException(
            "no data set "
                + file
                + ": expected the synthetic one fill, node or demo makes on first use with these"
                + " options");
      }
      System.out.printf(
          "making data set %s (%d examples, seed %d)%n", file, examples, builtIn.dataSeed);
      SyntheticPreferences.write(file, builtIn.dataSeed, examples);
    }
    return ExampleSet.load(file, DataFormat.TEXT);
  }

  private void makeModel(Path dir) throws IOException {
    System.out.printf("making reference model %s%n", dir);
    try (TinyLm lm = TinyLm.create(builtIn.config())) {
      lm.save(dir);
    }
  }

  /**
   * Makes or reads the data set and the model, loads the model and derives the cache: spec,
   * fingerprint, and the definition a node registers (its runners load the saved model, one per
   * compute thread); writes {@code cache.json} into the cache's directory.
   */
  public Job prepare(ComputeOptions compute) throws IOException {
    if (perToken()) {
      compute.checkUserModel();
      return TeacherJobs.prepare(this).job(); // the teacher stays loaded while the node runs
    }
    if (userModel.given()) {
      compute.checkUserModel();
      segmentPlace();
      rangeSize();
      return userModel.prepare(this);
    }
    int microBatch = compute.microBatch();
    CacheIdentity id = identify(true);
    int maxSeqLen = builtIn.maxSeqLen();
    Path dir = modelDir();
    Supplier<ModelRunner> runners =
        () -> {
          try {
            return new ReferenceLogprobRunner(TinyLm.load(dir), microBatch, maxSeqLen);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    try (ModelRunner runner = runners.get()) {
      id.runner().check(runner);
    }
    return job(id, id.data(), runners, BatchPlanner.fixed(microBatch));
  }

  /**
   * The job of {@code id} over {@code rows} (the data set as the runners take it), with its
   * manifest written.
   */
  Job job(CacheIdentity id, ExampleSet rows, Supplier<ModelRunner> runners, BatchPlanner planner)
      throws IOException {
    id.writeManifest();
    CacheDefinition definition =
        new CacheDefinition(
                id.spec(),
                id.fingerprint(),
                rows,
                runners,
                id.cacheDir().resolve("segments"),
                planner)
            .withInputs(id.inputs());
    return new Job(
        rows, id.spec(), id.fingerprint(), id.cacheDir(), segmentPlace().apply(definition));
  }
}
