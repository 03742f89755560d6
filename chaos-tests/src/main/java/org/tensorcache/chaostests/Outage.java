package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * A service the cluster depends on (the object store, the journal's PostgreSQL) stopped for {@link
 * #LENGTH} mid-fill and started again, while one node's {@code /ready} and metrics are watched.
 * What was persisted when it stopped is remembered, for the check after the fill that none of it
 * was computed again.
 */
final class Outage {
  /** How long the service stays down. */
  static final Duration LENGTH = Duration.ofSeconds(20);

  /** How long the cluster may take to be ready again after the service is back. */
  private static final Duration RECOVERY = Duration.ofSeconds(120);

  static final String REACHABLE = "tensorcache_object_storage_reachable";
  static final String FAILED_TRIES = "tensorcache_object_storage_failed_attempts_total";
  private static final String BUCKET = "bucket=\"" + ObjectStore.BUCKET + "\"";

  /** Stops or starts the service. */
  interface Switch {
    void flip() throws Exception;
  }

  private final Episode ep;
  private final Phase phase;
  private final String kind;
  private final List<NodeProcess> nodes;
  private final NodeProcess watched;
  private final NodeOps ops;
  private final Map<NodeProcess, Integer> marks;
  private final Set<Integer> persisted;
  private final boolean midFill;
  private final Map<Integer, Integer> readyDown = new TreeMap<>();
  private boolean reachableZero;
  private boolean readyAgain;
  private boolean reachableAgain;
  private double failedTriesBefore;
  private double failedTriesAfter;
  private long t0;
  private long downMs;
  private long backMs = -1;

  private Outage(Episode ep, Phase phase, String kind) throws Exception {
    this.ep = ep;
    this.phase = phase;
    this.kind = kind;
    List<NodeProcess> live = ep.cluster().live();
    this.nodes = live;
    this.watched = live.get(0);
    this.ops = NodeOps.of(watched);
    CacheStatus s = ep.status(phase.client());
    this.midFill = s != null && s.persistedRanges() < s.ranges();
    this.persisted = Faults.persisted(ep.stored().segmentDir());
    this.marks = Faults.marks(live);
  }

  /**
   * Stops the service with {@code stop}, watches for {@link #LENGTH} and starts it with {@code
   * start}; {@link #awaitRecovery} follows (another outage may come first).
   */
  static Outage of(Episode ep, Phase phase, String kind, Switch stop, Switch start)
      throws Exception {
    Outage o = new Outage(ep, phase, kind);
    o.failedTriesBefore = o.failedTries();
    o.t0 = System.nanoTime();
    stop.flip();
    while (System.nanoTime() - o.t0 < LENGTH.toNanos()) {
      o.readyDown.merge(o.ops.ready(), 1, Integer::sum);
      o.reachableZero |= o.ops.metric(REACHABLE, BUCKET).orElse(-1) == 0;
      Thread.sleep(500);
    }
    start.flip();
    o.downMs = (System.nanoTime() - o.t0) / 1_000_000;
    return o;
  }

  /**
   * Waits (bounded) until the watched node is ready again, object storage reachable in its metrics
   * and the coordinator answering; records the fault.
   */
  void awaitRecovery() throws InterruptedException {
    long deadline = System.nanoTime() + RECOVERY.toNanos();
    while (System.nanoTime() < deadline) {
      readyAgain = ops.ready() == 200;
      reachableAgain = ops.metric(REACHABLE, BUCKET).orElse(-1) == 1;
      if (readyAgain && reachableAgain && ep.status(phase.client()) != null) {
        backMs = (System.nanoTime() - t0) / 1_000_000;
        break;
      }
      Thread.sleep(500);
    }
    failedTriesAfter = failedTries();
    ep.report().fault(new ChaosReport.Fault(ep.index(), kind, midFill, backMs, -1));
  }

  /** The failed tries of object storage requests of every node, together. */
  private double failedTries() throws InterruptedException {
    double sum = 0;
    for (NodeProcess n : nodes) {
      try {
        sum += NodeOps.of(n).metric(FAILED_TRIES, BUCKET).orElse(0);
      } catch (java.io.IOException e) {
        // a node without metrics adds nothing
      }
    }
    return sum;
  }

  /** How many tries of object storage requests failed (and were retried) from the stop to back. */
  long failedTriesMeanwhile() {
    return Math.round(failedTriesAfter - failedTriesBefore);
  }

  /** The watched node, and what its {@code /ready} answered while the service was down. */
  String readyWhileDown() {
    return watched.name() + " /ready answered " + readyDown + " (status: times; -1 none)";
  }

  /** Whether the watched node answered {@code /ready} with 503 while the service was down. */
  boolean notReadySeen() {
    return readyDown.containsKey(503);
  }

  /** Whether the watched node's metrics said object storage was unreachable meanwhile. */
  boolean unreachableSeen() {
    return reachableZero;
  }

  /** Whether the watched node was ready, object storage reachable and the coordinator answering. */
  boolean recovered() {
    return backMs >= 0;
  }

  /** How long from the stop until the watched node was back, in ms; -1 if it was not. */
  long backMs() {
    return backMs;
  }

  /** How long the service was down, in ms. */
  long downMs() {
    return downMs;
  }

  boolean midFill() {
    return midFill;
  }

  String kind() {
    return kind;
  }

  /** What the watched node's metrics showed once back: ready, reachable. */
  String recoveryDetail() {
    return "ready " + readyAgain + ", " + REACHABLE + " 1 " + reachableAgain;
  }

  /** The ranges persisted when the service stopped that a node computed again since. */
  Set<Integer> recomputed() throws Exception {
    return Faults.rangesComputedIn(ep.cluster().live(), marks, ep.cache().cacheId(), persisted);
  }

  /** How many ranges were persisted when the service stopped. */
  int persistedBefore() {
    return persisted.size();
  }
}
