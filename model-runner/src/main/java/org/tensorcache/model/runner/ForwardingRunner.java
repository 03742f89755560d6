package org.tensorcache.model.runner;

import java.util.List;
import java.util.Map;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;

/**
 * A runner that computes what another computes and says it is that one: same id, version, fields,
 * weights and parameters, so same fingerprint. Subclasses add around {@link #run} what they watch
 * or hold back (timing, a gate, a delay) and change no value.
 */
public abstract class ForwardingRunner implements ModelRunner {
  private final ModelRunner inner;

  protected ForwardingRunner(ModelRunner inner) {
    this.inner = inner;
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    return inner.run(batch);
  }

  @Override
  public String id() {
    return inner.id();
  }

  @Override
  public String version() {
    return inner.version();
  }

  @Override
  public List<FieldSpec> fields() {
    return inner.fields();
  }

  @Override
  public String weightsDigest() {
    return inner.weightsDigest();
  }

  @Override
  public Map<String, String> parameters() {
    return inner.parameters();
  }

  @Override
  public void close() {
    inner.close();
  }
}
