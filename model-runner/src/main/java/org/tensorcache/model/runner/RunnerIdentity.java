package org.tensorcache.model.runner;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.tensorcache.fields.FieldSpec;

/**
 * Everything of a runner that decides its values, apart from the runner: what a cache is
 * fingerprinted by. It can be known from a model's files and settings without loading the model,
 * and a loaded runner's ({@link #of}) must equal it.
 *
 * @param id stable name of what is computed
 * @param version bumped whenever the computation changes its values
 * @param weightsDigest SHA-256 of the model weights' bytes
 * @param parameters every other parameter that changes values
 * @param fields the fields produced for every example, in order
 */
public record RunnerIdentity(
    String id,
    String version,
    String weightsDigest,
    Map<String, String> parameters,
    List<FieldSpec> fields) {
  /** Copies the parameters, sorted by key (their order never matters), and the fields. */
  public RunnerIdentity {
    parameters = Collections.unmodifiableSortedMap(new TreeMap<>(parameters));
    fields = List.copyOf(fields);
  }

  /** The identity of a loaded {@code runner}. */
  public static RunnerIdentity of(ModelRunner runner) {
    return new RunnerIdentity(
        runner.id(),
        runner.version(),
        runner.weightsDigest(),
        runner.parameters(),
        runner.fields());
  }

  /**
   * Checks that {@code runner}, as loaded, computes what this identity says; throws naming what
   * differs otherwise (e.g. a model file whose output width is not the hidden size its directory
   * records).
   */
  public void check(ModelRunner runner) {
    RunnerIdentity loaded = of(runner);
    if (!loaded.equals(this)) {
      throw new IllegalStateException(
          "the loaded runner is " + loaded + ", its files and settings said " + this);
    }
  }
}
