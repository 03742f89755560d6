package org.tensorcache.launch;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The inputs a cache was filled from, as a trainer checks them against the data set, model,
 * tokenizer and settings it is given: flat strings, a key left out when it is not known. They
 * describe the cache; they do not decide it (the fingerprint does), so recording more never changes
 * a cache id.
 */
final class RecordedInputs {
  /** The version of TensorCache that records them. */
  static final String TENSORCACHE_VERSION = "0.1.0";

  /** What a prepared data set's header says about the rows it was made from, copied as is. */
  private static final List<String> HEADER_KEYS =
      List.of("rows_sha256", "source", "source_sha256", "chat_template_sha256");

  private final SortedMap<String, String> values = new TreeMap<>();

  private RecordedInputs() {}

  /**
   * What every cache records: its identity and layout, the runner ({@code kind}: {@code logprob},
   * {@code embedding} or {@code builtin}) and the data file.
   */
  static RecordedInputs of(
      RunnerIdentity runner,
      String kind,
      ExampleSet data,
      CacheSpec spec,
      Fingerprint fingerprint) {
    return new RecordedInputs()
        .put("cache_id", fingerprint.cacheId())
        .put("fingerprint", fingerprint.hex())
        .put("cache_name", spec.name())
        .put("n", Long.toString(spec.n()))
        .put("range_size", Integer.toString(spec.rangeSize()))
        .put("runner", runner.id() + "/" + runner.version())
        .put("runner_kind", kind)
        .put("weights_sha256", runner.weightsDigest())
        .put("dataset", data.source().toString())
        .put("dataset_sha256", data.digest())
        .put("tensorcache_version", TENSORCACHE_VERSION);
  }

  /** Records {@code value} under {@code key}; a null value (not known) records nothing. */
  RecordedInputs put(String key, String value) {
    if (value != null) {
      values.put(key, value);
    }
    return this;
  }

  /** Copies what a prepared data set's header says about its origin: rows, source, template. */
  RecordedInputs fromHeader(ExampleSet data) {
    for (String key : HEADER_KEYS) {
      put(key, data.header().get(key));
    }
    return this;
  }

  /** Records {@code value} under {@code key} unless something is recorded there already. */
  RecordedInputs putIfAbsent(String key, String value) {
    return values.containsKey(key) ? this : put(key, value);
  }

  /** The inputs, sorted by key. */
  Map<String, String> map() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(values));
  }
}
