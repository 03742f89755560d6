package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.spec.FieldSpec;

/**
 * A node that stops (SIGTERM, a test's shutdown) while a forward pass runs frees its runners'
 * native memory only after the pass has returned: closing them under it crashed the JVM in libtorch
 * (SIGSEGV in a log-softmax, found by the chaos suite).
 */
class StopWhileComputingTest {
  @TempDir Path dir;

  /** A runner whose passes wait at a gate, and which records a close during a pass. */
  static final class GatedRunner implements ModelRunner {
    final ModelRunner inner;
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch closed = new CountDownLatch(1);
    final AtomicBoolean running = new AtomicBoolean();
    final AtomicBoolean closedWhileRunning = new AtomicBoolean();

    GatedRunner(ModelRunner inner) {
      this.inner = inner;
    }

    @Override
    public RunnerOutput run(List<? extends Example> batch) {
      running.set(true);
      try {
        entered.countDown();
        release.await(60, TimeUnit.SECONDS);
        return inner.run(batch);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      } finally {
        running.set(false);
      }
    }

    @Override
    public void close() {
      closedWhileRunning.compareAndSet(false, running.get());
      inner.close();
      closed.countDown();
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
  }

  @Test
  void runnersAreClosedOnlyAfterTheRunningPassReturns() throws Exception {
    TestCache cache = new TestCache(dir, 64, 32);
    CacheDefinition base = cache.definition();
    GatedRunner gated = new GatedRunner(base.runners().get());
    CacheDefinition definition =
        new CacheDefinition(
            base.spec(),
            base.fingerprint(),
            base.data(),
            () -> gated,
            base.segmentDir(),
            base.microBatch());
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(definition))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      var system = cluster.nodes.get(0).system();
      TensorCacheClient.create(system).lookupAsync(definition.cacheId(), new long[] {3});
      assertTrue(gated.entered.await(30, TimeUnit.SECONDS), "a pass started");

      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertFalse(gated.closed.await(500, TimeUnit.MILLISECONDS), "closed under a running pass");
      gated.release.countDown();
      assertTrue(gated.closed.await(30, TimeUnit.SECONDS), "closed once the pass returned");
      assertFalse(gated.closedWhileRunning.get());
    }
  }
}
