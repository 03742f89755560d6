package org.tensorcache.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.node.NodeLauncher;

/** Drives a fill through the coordinator and times it until every range is persisted. */
final class Fill {
  private static final Duration ASK = Duration.ofSeconds(10);

  private Fill() {}

  /** Seconds from the fill request until every range of {@code cacheId} is persisted. */
  static double run(NodeLauncher.Node node, String cacheId) throws Exception {
    long t0 = System.nanoTime();
    AskPattern
        .<Coordinator.Command, org.apache.pekko.pattern.StatusReply<org.apache.pekko.Done>>ask(
            node.coordinator(),
            r -> new Coordinator.StartFill(cacheId, r),
            ASK,
            node.system().scheduler())
        .toCompletableFuture()
        .get(ASK.toSeconds(), TimeUnit.SECONDS)
        .getValue();
    while (true) {
      Coordinator.Status status =
          AskPattern.<Coordinator.Command, Coordinator.Status>ask(
                  node.coordinator(), Coordinator.GetStatus::new, ASK, node.system().scheduler())
              .toCompletableFuture()
              .get(ASK.toSeconds(), TimeUnit.SECONDS);
      for (Coordinator.CacheStatus s : status.caches()) {
        if (s.cacheId().equals(cacheId) && s.persistedRanges() == s.ranges()) {
          return (System.nanoTime() - t0) / 1e9;
        }
      }
      Thread.sleep(20);
    }
  }
}
