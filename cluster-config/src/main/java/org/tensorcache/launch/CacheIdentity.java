package org.tensorcache.launch;

import java.nio.file.Path;
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
}
