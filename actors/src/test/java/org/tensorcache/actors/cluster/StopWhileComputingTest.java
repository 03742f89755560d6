package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.testing.GatedRunner;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A node that stops (SIGTERM, a test's shutdown) while a forward pass runs frees its runners'
 * native memory only after the pass has returned: closing them under it crashed the JVM in libtorch
 * (SIGSEGV in a log-softmax, found by the chaos suite).
 */
class StopWhileComputingTest {
  @TempDir Path dir;

  @Test
  void runnersAreClosedOnlyAfterTheRunningPassReturns() throws Exception {
    TestCache cache = new TestCache(dir, 64, 32);
    CacheDefinition base = cache.definition();
    cache.gate.close();
    GatedRunner gated = cache.newRunner(); // the node's one runner, so that its close is seen
    CacheDefinition definition =
        new CacheDefinition(
            base.spec(),
            base.fingerprint(),
            base.data(),
            () -> gated,
            base.segmentDir(),
            base.planner());
    try (TestCluster cluster = new TestCluster(dir.resolve("node"), List.of(definition))) {
      cluster.add("\"compute\", \"lookup\"");
      cluster.awaitUp(Duration.ofSeconds(30));
      var system = cluster.nodes.get(0).system();
      TensorCacheClient.create(system).lookupAsync(definition.cacheId(), new long[] {3});
      cache.gate.awaitHeld(1, Duration.ofSeconds(30)); // a pass started

      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertFalse(gated.closed.await(500, TimeUnit.MILLISECONDS), "closed under a running pass");
      cache.gate.open();
      assertTrue(gated.closed.await(30, TimeUnit.SECONDS), "closed once the pass returned");
      assertFalse(gated.closedWhileRunning.get());
    }
  }
}
