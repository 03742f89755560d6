package org.tensorcache.bench.byo;

import ai.djl.pytorch.jni.JniUtils;
import java.time.Instant;
import java.util.List;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ForwardingRunner;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;

/**
 * A runner that hands everything to another and records, in shared {@link Stats}, when and for how
 * long it ran and with how many libtorch threads: the part of a fill spent in the model, told apart
 * from the rest. It adds two clock reads per micro-batch and changes no value or fingerprint input.
 */
final class TimedRunner extends ForwardingRunner {
  /** What the runners of one cache did; read once the fill is over. */
  static final class Stats {
    private long firstStart;
    private long lastEnd;
    private Instant lastEndWall = Instant.EPOCH;
    private long busyNs;
    private int calls;
    private int threads = -1;
    private String thread = "";

    synchronized void record(long start, long end) {
      if (calls == 0) {
        firstStart = start;
        threads = JniUtils.getNumThreads();
        thread = Thread.currentThread().getName();
      }
      calls++;
      busyNs += end - start;
      lastEnd = end;
      lastEndWall = Instant.now();
    }

    synchronized long firstStart() {
      return firstStart;
    }

    synchronized long lastEnd() {
      return lastEnd;
    }

    /** The wall-clock time of the last call's end, to set against file times. */
    synchronized Instant lastEndWall() {
      return lastEndWall;
    }

    synchronized long busyNs() {
      return busyNs;
    }

    synchronized int calls() {
      return calls;
    }

    /** libtorch's intra-op threads as seen from the compute thread, or -1 before any call. */
    synchronized int threads() {
      return threads;
    }

    /** The name of the thread of the first call. */
    synchronized String thread() {
      return thread;
    }
  }

  private final Stats stats;

  TimedRunner(ModelRunner inner, Stats stats) {
    super(inner);
    this.stats = stats;
  }

  @Override
  public RunnerOutput run(List<? extends Example> batch) {
    long start = System.nanoTime();
    RunnerOutput out = super.run(batch);
    stats.record(start, System.nanoTime());
    return out;
  }
}
