package org.tensorcache.launch;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import me.tongfei.progressbar.ProgressBar;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;

/** Asks the coordinator to fill a cache and follows it with a progress bar until persisted. */
public final class ClusterFill {
  private static final Duration ASK = Duration.ofSeconds(10);

  private ClusterFill() {}

  /** Fills {@code cacheId}; returns its status once every range is persisted. */
  public static CacheStatus run(
      ActorSystem<?> system,
      ActorRef<Coordinator.Command> coordinator,
      String cacheId,
      boolean showProgress)
      throws Exception {
    AskPattern.<Coordinator.Command, org.apache.pekko.pattern.StatusReply<Done>>ask(
            coordinator, r -> new Coordinator.StartFill(cacheId, r), ASK, system.scheduler())
        .toCompletableFuture()
        .get(ASK.toMillis(), TimeUnit.MILLISECONDS)
        .getValue();
    CacheStatus status = status(system, coordinator, cacheId);
    if (status.persistedRanges() == status.ranges()) {
      return status;
    }
    try (ProgressBar bar =
        showProgress ? Progress.examples("fill " + cacheId, status.examples()) : null) {
      while (status.persistedRanges() < status.ranges()) {
        if (bar != null) {
          bar.stepTo(status.present());
        }
        Thread.sleep(100);
        status = status(system, coordinator, cacheId);
      }
      if (bar != null) {
        bar.stepTo(status.present());
      }
    }
    return status;
  }

  /** The coordinator's view of one cache. */
  public static CacheStatus status(
      ActorSystem<?> system, ActorRef<Coordinator.Command> coordinator, String cacheId)
      throws Exception {
    Coordinator.Status status =
        AskPattern.<Coordinator.Command, Coordinator.Status>ask(
                coordinator, Coordinator.GetStatus::new, ASK, system.scheduler())
            .toCompletableFuture()
            .get(ASK.toMillis(), TimeUnit.MILLISECONDS);
    for (CacheStatus s : status.caches()) {
      if (s.cacheId().equals(cacheId)) {
        return s;
      }
    }
    throw new IllegalStateException("the coordinator does not know cache " + cacheId);
  }
}
