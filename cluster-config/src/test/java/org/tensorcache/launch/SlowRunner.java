package org.tensorcache.launch;

import java.util.List;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ForwardingRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;

/** A runner that computes what another computes, taking at least a given time per batch. */
final class SlowRunner extends ForwardingRunner {
  private final long millis;

  SlowRunner(ModelRunner inner, long millis) {
    super(inner);
    this.millis = millis;
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    return super.run(batch);
  }
}
