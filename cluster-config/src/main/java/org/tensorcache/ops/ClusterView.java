package org.tensorcache.ops;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;

/**
 * The coverage of every cache as the coordinator last reported it, asked for every {@code
 * tensorcache.metrics.poll-interval}, with the fill rate measured over the last {@code rate-window}
 * and the time to completion it gives. The status page and the range gauges read it; one ask at a
 * time, and nothing is asked while nobody runs it.
 */
final class ClusterView {
  private static final Logger log = LoggerFactory.getLogger(ClusterView.class);

  /** One cache's coverage with its fill rate (examples per second) and time to complete. */
  record CacheView(CacheStatus status, double examplesPerSecond, double etaSeconds) {}

  /** The last answer: when it came ({@link System#nanoTime()}, 0: never) and each cache's view. */
  record Snapshot(long atNanos, List<CacheView> caches) {
    /** Seconds since the last answer; infinite when there was none. */
    double ageSeconds() {
      return atNanos == 0 ? Double.POSITIVE_INFINITY : (System.nanoTime() - atNanos) / 1e9;
    }
  }

  private final ActorSystem<?> system;
  private final ActorRef<Coordinator.Command> coordinator;
  private final Duration interval;
  private final long windowNanos;
  private final AtomicBoolean asking = new AtomicBoolean();
  private final Map<String, Deque<long[]>> samples = new HashMap<>(); // under this
  private volatile Snapshot last = new Snapshot(0, List.of());

  ClusterView(
      ActorSystem<?> system,
      ActorRef<Coordinator.Command> coordinator,
      Duration interval,
      Duration window) {
    this.system = system;
    this.coordinator = coordinator;
    this.interval = interval;
    this.windowNanos = window.toNanos();
  }

  /** Starts asking; it stops with the actor system. */
  void start() {
    system
        .scheduler()
        .scheduleAtFixedRate(Duration.ZERO, interval, this::poll, system.executionContext());
  }

  /** The last answer and the rates measured up to it. */
  Snapshot snapshot() {
    return last;
  }

  private void poll() {
    if (!asking.compareAndSet(false, true)) {
      return; // the last ask is still out
    }
    Duration timeout =
        interval.multipliedBy(3).compareTo(Duration.ofSeconds(3)) > 0
            ? interval.multipliedBy(3)
            : Duration.ofSeconds(3);
    AskPattern.<Coordinator.Command, Coordinator.Status>ask(
            coordinator, Coordinator.GetStatus::new, timeout, system.scheduler())
        .whenComplete(
            (status, failure) -> {
              asking.set(false);
              if (failure != null) {
                log.debug("no status from the coordinator: {}", failure.toString());
              } else {
                last = update(status, System.nanoTime());
              }
            });
  }

  /** The view of {@code status} at {@code now}, its rates measured with the earlier answers. */
  synchronized Snapshot update(Coordinator.Status status, long now) {
    List<CacheView> views = new java.util.ArrayList<>();
    for (CacheStatus c : status.caches()) {
      Deque<long[]> s = samples.computeIfAbsent(c.cacheId(), id -> new ArrayDeque<>());
      if (!s.isEmpty() && s.peekLast()[1] > c.present()) {
        s.clear(); // fewer present than before: a coordinator that just started; measure again
      }
      s.addLast(new long[] {now, c.present()});
      while (s.size() > 2 && now - s.peekFirst()[0] > windowNanos) {
        s.removeFirst();
      }
      long[] first = s.peekFirst();
      double seconds = (now - first[0]) / 1e9;
      double rate = seconds > 0 ? (c.present() - first[1]) / seconds : 0;
      long remaining = c.examples() - c.present();
      double eta = remaining == 0 ? 0 : rate > 0 ? remaining / rate : Double.POSITIVE_INFINITY;
      views.add(new CacheView(c, rate, eta));
    }
    return new Snapshot(now, List.copyOf(views));
  }
}
