package org.tensorcache.launch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * What identifies a job's cache, known from file digests and settings without loading a model: the
 * data set as read, what the runner computes, the cache's spec and fingerprint, its directory, and
 * the inputs it records for trainers.
 */
public record CacheIdentity(
    ExampleSet data,
    RunnerIdentity runner,
    CacheSpec spec,
    Fingerprint fingerprint,
    Path cacheDir,
    Map<String, String> inputs) {

  /** The cache id, e.g. {@code dpo-ref-ea6feac15e0d1e39}. */
  public String cacheId() {
    return fingerprint.cacheId();
  }

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /**
   * Writes what the cache was made from, for people reading the data directory; the recorded inputs
   * under {@code "inputs"}, as a trainer checks them.
   */
  public void writeManifest() throws IOException {
    CacheIdentity id = this;
    RunnerIdentity runner = id.runner();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cache_id", id.cacheId());
    m.put("fingerprint", id.fingerprint().hex());
    m.put("runner", runner.id() + "/" + runner.version());
    m.put("weights_sha256", runner.weightsDigest());
    m.put("dataset", id.data().source().toString());
    m.put("dataset_sha256", id.data().digest());
    m.put("parameters", runner.parameters());
    m.put("n", id.spec().n());
    m.put("range_size", id.spec().rangeSize());
    m.put("fields", id.spec().fields().stream().map(Object::toString).toList());
    m.put("inputs", id.inputs());
    Files.createDirectories(id.cacheDir());
    Path tmp = Files.createTempFile(id.cacheDir(), ".tmp-", ".json");
    JSON.writeValue(tmp.toFile(), m);
    Files.move(
        tmp,
        id.cacheDir().resolve("cache.json"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }
}
