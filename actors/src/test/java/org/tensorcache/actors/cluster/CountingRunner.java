package org.tensorcache.actors.cluster;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.spec.FieldSpec;

/**
 * A real runner that also counts how many examples it computed and, to keep a fill running long
 * enough for faults to land in the middle of it, can take a fixed extra time per batch.
 */
record CountingRunner(ModelRunner inner, AtomicLong count, long extraNanosPerBatch)
    implements ModelRunner {
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
    RunnerOutput out = inner.run(batch);
    if (extraNanosPerBatch > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(extraNanosPerBatch); // a slower device
    }
    count.addAndGet(batch.size());
    return out;
  }

  @Override
  public void close() {
    inner.close();
  }
}
