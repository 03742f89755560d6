package org.tensorcache.launch;

import java.util.List;
import java.util.Map;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;

/** A runner that computes what another computes, taking at least a given time per batch. */
final class SlowRunner implements ModelRunner {
  private final ModelRunner inner;
  private final long millis;

  SlowRunner(ModelRunner inner, long millis) {
    this.inner = inner;
    this.millis = millis;
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
  public RunnerOutput run(List<? extends Example> batch) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    return inner.run(batch);
  }

  @Override
  public void close() {
    inner.close();
  }
}
