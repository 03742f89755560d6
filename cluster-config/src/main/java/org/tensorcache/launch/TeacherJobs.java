package org.tensorcache.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.tensorcache.model.data.DataFormat;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.model.usermodel.TeacherModel;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.spec.TokenCoding;

/**
 * The cache of a distillation teacher on the user's model ({@code --runner topk}): for every
 * completion token the top-K ids, their log-probs and the tail's, coded as {@link TokenCoding.TopK}
 * says. Filled by the nodes of a cluster ({@code node}, then {@code fill}) or in this process
 * ({@code fill --local}), served by the lookup port and exported.
 */
public final class TeacherJobs {
  /** The runner's name on the command line. */
  static final String RUNNER = "topk";

  private TeacherJobs() {}

  /** The cache these options identify, from digests and settings; only the tokenizer is read. */
  static CacheIdentity identify(JobOptions job, UserModelOptions user, TeacherOptions t)
      throws IOException {
    try (TeacherModel teacher = open(user, t)) {
      return identity(
          job, user, t, teacher, ExampleSet.load(user.datasetFile(), user.dataFormat()));
    }
  }

  /**
   * Opens the model directory and the data set, checks every row before anything is computed, and
   * derives the cache; the model is loaded by the first runner.
   */
  public static TeacherJob prepare(JobOptions job) throws IOException {
    UserModelOptions user = job.userModel;
    TeacherModel teacher = open(user, job.teacher);
    try {
      ExampleSet raw = ExampleSet.load(user.datasetFile(), user.dataFormat());
      ExampleSet rows = teacher.prepare(raw);
      CacheIdentity id = identity(job, user, job.teacher, teacher, raw);
      System.out.printf(
          "data set %s: %d %s rows, every row fits %s; top-%d of %d ids at temperature %s, %s%n",
          raw.source(),
          rows.size(),
          raw.format().cliName(),
          user.modelDir,
          job.teacher.k(),
          teacher.vocab(),
          job.teacher.temperature(),
          job.teacher.exact ? "exact" : "compact");
      id.writeManifest();
      var segments =
          job.segmentPlace().segments(SegmentCodec.ROWS, id, id.cacheDir().resolve("segments"));
      DataFormat format = raw.format();
      return new TeacherJob(
          rows, id, () -> newRunner(teacher, format), teacher.planner(), segments, teacher);
    } catch (IOException | RuntimeException e) {
      teacher.close();
      throw e;
    }
  }

  private static TeacherModel open(UserModelOptions user, TeacherOptions t) throws IOException {
    return TeacherModel.open(
        user.modelDir, t.k(), t.temperature(), user.truncation(), user.budgetSettings());
  }

  private static CacheIdentity identity(
      JobOptions job, UserModelOptions user, TeacherOptions t, TeacherModel teacher, ExampleSet raw)
      throws IOException {
    TokenCoding.TopK coding = new TokenCoding.TopK(teacher.vocab(), t.k(), t.exact);
    return job.identity(
        teacher.identity(raw.format()),
        coding,
        RUNNER,
        raw,
        in ->
            in.put("data_format", raw.format().cliName())
                .fromHeader(raw)
                .put("model_dir", user.modelDir.toString())
                .put("tokenizer_sha256", teacher.directory().tokenizerDigest())
                .put("model_state_sha256", teacher.directory().recorded("model_state_sha256"))
                .putIfAbsent(
                    "chat_template_sha256", teacher.directory().recorded("chat_template_sha256"))
                .put("top_k", Integer.toString(t.k()))
                .put("temperature", Float.toString(t.temperature()))
                .put("storage", t.exact ? "exact" : "compact")
                .put("max_length", Integer.toString(user.maxLength))
                .put("truncation_mode", user.truncationMode));
  }

  private static TokenRunner newRunner(TeacherModel teacher, DataFormat format) {
    try {
      return teacher.newRunner(format);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
