package org.tensorcache.actors.testing;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ForwardingRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;

/**
 * A real runner whose forward passes go through a {@link Gate} the test holds, that counts the
 * examples it computed, and that records whether it was closed while a pass was running.
 */
public final class GatedRunner extends ForwardingRunner {
  private final AtomicLong count;
  private final Gate gate;
  private final AtomicInteger running = new AtomicInteger();
  public final CountDownLatch closed = new CountDownLatch(1);
  public final AtomicBoolean closedWhileRunning = new AtomicBoolean();

  public GatedRunner(ModelRunner inner, AtomicLong count, Gate gate) {
    super(inner);
    this.count = count;
    this.gate = gate;
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    running.incrementAndGet();
    try {
      gate.pass();
      RunnerOutput out = super.run(batch);
      count.addAndGet(batch.size());
      return out;
    } finally {
      running.decrementAndGet();
    }
  }

  @Override
  public void close() {
    closedWhileRunning.compareAndSet(false, running.get() > 0);
    super.close();
    closed.countDown();
  }
}
