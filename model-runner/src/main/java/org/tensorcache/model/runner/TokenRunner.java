package org.tensorcache.model.runner;

import java.util.List;
import java.util.Map;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;

/**
 * Computes named per-token tensors (one value per trained token of an example) for a batch of
 * examples; the per-token counterpart of {@link ModelRunner}, fingerprinted the same way. A runner
 * holds native resources and is not thread-safe: one per thread.
 */
public interface TokenRunner extends AutoCloseable {
  /** Stable name of what is computed, e.g. {@code topk-teacher}. */
  String id();

  /** Bumped whenever the computation changes its values. */
  String version();

  /** The per-token fields produced for every example, in a fixed order. */
  List<FieldSpec> fields();

  /** SHA-256 of the model weights' bytes. */
  String weightsDigest();

  /** Every other parameter that changes values (K, temperature, maximum length, ...). */
  Map<String, String> parameters();

  /**
   * Computes every field for every example of {@code batch}; the output is checked (lengths, no
   * NaN) before it is returned.
   */
  TokenOutput run(List<? extends Example> batch);

  /** Releases native memory. */
  @Override
  void close();
}
