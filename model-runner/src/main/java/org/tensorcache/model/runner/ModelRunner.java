package org.tensorcache.model.runner;

import java.util.List;
import java.util.Map;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;

/**
 * Computes named per-example tensors for a batch of examples. Everything that decides the values
 * (id, version, weights digest, parameters) is exposed so that a cache can be fingerprinted by it.
 * A runner holds native resources and is not thread-safe: one per thread.
 */
public interface ModelRunner extends AutoCloseable {
  /** Stable name of what is computed, e.g. {@code reference-logprob}. */
  String id();

  /** Bumped whenever the computation changes its values. */
  String version();

  /** The fields produced for every example, in a fixed order. */
  List<FieldSpec> fields();

  /** SHA-256 of the model weights' bytes. */
  String weightsDigest();

  /** Every other parameter that changes values (model sizes, maximum length, ...). */
  Map<String, String> parameters();

  /**
   * Computes every field for every example of {@code batch}; the output is checked (shape, no NaN)
   * before it is returned, so a value that is not right is never handed on.
   */
  RunnerOutput run(List<? extends Example> batch);

  /** Releases native memory. */
  @Override
  void close();
}
