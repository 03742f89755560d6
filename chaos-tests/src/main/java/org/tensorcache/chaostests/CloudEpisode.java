package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.testing.Postgres;

/**
 * An episode of a cluster that shares no disk: every node on an empty data directory of its own,
 * segments in object storage, the journal in PostgreSQL. The whole cluster is preempted: every node
 * SIGKILLed and its data directory deleted, then three fresh nodes start on new empty ones and must
 * restore every persisted range from object storage, computing none of them again.
 */
final class CloudEpisode {
  /** What happens before the preemption. */
  enum Plan {
    /**
     * Mid-fill the object store stops for {@link Outage#LENGTH}, and as soon as it is back the
     * journal's PostgreSQL stops for as long (segments written meanwhile are recorded only after);
     * each if named.
     */
    OUTAGES,
    /** After the fill one node is SIGKILLed and replaced by a fresh one on an empty directory. */
    REPLACE_NODE
  }

  static final String PREEMPT = "PREEMPT_ALL_WIPE";
  static final String STORE_DOWN = "OBJECT_STORE_OUTAGE";
  static final String JOURNAL_DOWN = "JOURNAL_OUTAGE";
  static final String REPLACE = "REPLACE_NODE_EMPTY_DIR";

  /** The outages a run may name, in the order they come. */
  static final List<String> OUTAGES = List.of(STORE_DOWN, JOURNAL_DOWN);

  private static final Duration FILL_LIMIT = Duration.ofSeconds(300);

  private final Episode ep;
  private final ObjectStore store;
  private final Postgres pg;
  private final Set<String> outages;
  private final String name;

  CloudEpisode(Episode ep, ObjectStore store, Postgres pg, Set<String> outages) {
    if (!OUTAGES.containsAll(outages)) {
      throw new IllegalArgumentException("outages " + outages + " expected among " + OUTAGES);
    }
    this.ep = ep;
    this.store = store;
    this.pg = pg;
    this.outages = outages;
    this.name = "ep" + ep.index();
  }

  void run(Plan plan) throws Exception {
    Phase fill = new Phase(ep);
    fill.start();
    List<Outage> struck = new ArrayList<>();
    if (plan == Plan.OUTAGES) {
      // some segments written before the store goes; the fill cannot complete while it is down
      await(fill, s -> s.persistedRanges() > 0, "persisting");
      if (this.outages.contains(STORE_DOWN)) {
        struck.add(Outage.of(ep, fill, STORE_DOWN, store::stop, store::start));
      }
      if (!this.outages.contains(JOURNAL_DOWN)) {
        ep.report().skip(JOURNAL_DOWN, "not named for this run");
      } else if (pg.ownServer()) {
        struck.add(Outage.of(ep, fill, JOURNAL_DOWN, pg::stop, pg::start));
      } else {
        ep.report()
            .skip(
                JOURNAL_DOWN,
                "the journal's PostgreSQL is the one TENSORCACHE_PG_URL names, not this run's to"
                    + " stop, and none of its own can be started here (Debian's postgresql, as"
                    + " root)");
      }
      for (Outage o : struck) {
        o.awaitRecovery();
      }
    }
    fill.finish(name + " fill, segments in object storage");
    for (Outage o : struck) {
      check(o);
    }
    if (plan == Plan.REPLACE_NODE) {
      replaceNode(fill);
    }
    Phase restart = preemptAll(fill);
    restart.finish(name + " cold start on empty data directories");
    restart.stopGracefully();
  }

  private void check(Outage o) throws Exception {
    ChaosReport report = ep.report();
    String what = name + " " + o.kind();
    if (o.kind().equals(STORE_DOWN)) {
      report.check(
          what + ": /ready 503 and " + Outage.REACHABLE + " 0 while down",
          o.notReadySeen() && o.unreachableSeen(),
          o.readyWhileDown() + ", " + Outage.REACHABLE + " 0 seen " + o.unreachableSeen());
      // the coordinator's segment writes meanwhile failed and were tried again, not given up
      report.check(
          what + ": writes tried again meanwhile",
          o.failedTriesMeanwhile() > 0,
          o.failedTriesMeanwhile() + " failed tries");
    } else {
      report.observe(what + ": while down", o.readyWhileDown());
    }
    report.check(
        what + ": ready again once back",
        o.recovered(),
        o.recoveryDetail() + ", down " + o.downMs() + " ms, back after " + o.backMs() + " ms");
    report.check(
        what + ": struck mid-fill", o.midFill(), o.persistedBefore() + " ranges persisted");
    Set<Integer> again = o.recomputed();
    report.recomputed(o.kind(), again.size());
    report.check(
        what + ": persisted ranges not recomputed",
        again.isEmpty(),
        again.size() + " of " + o.persistedBefore() + " " + again);
  }

  /** SIGKILLs one node, deletes its data directory; a fresh node takes its place. */
  private void replaceNode(Phase phase) throws Exception {
    ChaosCluster cluster = ep.cluster();
    Set<Integer> persisted = Faults.persisted(ep.stored().segmentDir());
    Map<NodeProcess, Integer> marks = Faults.marks(cluster.live());
    phase.inject(Faults.Kind.SIGKILL_COMPUTE); // the replacement starts on an empty directory
    for (NodeProcess n : cluster.all()) {
      if (!n.isAlive()) {
        cluster.deleteDataDir(n);
      }
    }
    long wrong = phase.lookUpAll();
    ep.report().wrong += wrong;
    ep.report()
        .check(name + " " + REPLACE + ": every value equals the reference", wrong == 0, wrong + "");
    Set<Integer> again =
        Faults.rangesComputedIn(cluster.live(), marks, ep.cache().cacheId(), persisted);
    ep.report().recomputed(REPLACE, again.size());
    ep.report()
        .check(
            name + " " + REPLACE + ": persisted ranges not recomputed",
            again.isEmpty(),
            again.size() + " of " + persisted.size() + " " + again);
  }

  /**
   * Preempts the whole cluster once the fill is done and deletes every local data directory (the
   * client member's copies of segments too), then starts three fresh nodes, waits until they
   * restored every range from object storage and looks every example up. The fresh cluster's phase.
   */
  private Phase preemptAll(Phase before) throws Exception {
    ChaosCluster cluster = ep.cluster();
    ChaosReport report = ep.report();
    before.closeClient();
    cluster.killAll();
    // what the bucket holds once every node is dead: each of them must come back, none computed
    Set<Integer> done = Faults.persisted(ep.stored().segmentDir());
    for (NodeProcess n : cluster.all()) {
      cluster.deleteDataDir(n);
    }
    ChaosCluster.deleteTree(ep.cache().segmentDir());
    long t0 = System.nanoTime(); // the first fresh node process starts now
    Phase restart = new Phase(ep);
    restart.start();
    long upMs = (System.nanoTime() - t0) / 1_000_000;
    CacheStatus s =
        await(restart, c -> c.restored() && c.persistedRanges() == c.ranges(), "restored");
    long restoredMs = (System.nanoTime() - t0) / 1_000_000;
    long wrong = restart.lookUpAll();
    long servedMs = (System.nanoTime() - t0) / 1_000_000;
    report.wrong += wrong;
    report.check(
        name + " " + PREEMPT + ": every value equals the reference", wrong == 0, "" + wrong);
    report.check(
        name + " " + PREEMPT + ": every range was in object storage",
        done.size() == s.ranges(),
        done.size() + " of " + s.ranges());
    Set<Integer> again =
        Faults.rangesComputedIn(cluster.live(), Map.of(), ep.cache().cacheId(), done);
    report.recomputed(PREEMPT, again.size());
    report.coldStarts.add(
        new ChaosReport.ColdStart(
            ep.index(),
            done.size(),
            ep.cache().spec().n(),
            upMs,
            restoredMs,
            servedMs,
            again.size()));
    report.fault(new ChaosReport.Fault(ep.index(), PREEMPT, false, restoredMs, servedMs));
    report.check(
        name + " " + PREEMPT + ": persisted ranges not recomputed",
        again.isEmpty(),
        again.size() + " of " + done.size() + " " + again);
    return restart;
  }

  /** Waits (bounded) until the coordinator's status of the cache satisfies {@code until}. */
  private CacheStatus await(Phase phase, Predicate<CacheStatus> until, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + FILL_LIMIT.toNanos();
    CacheStatus s = ep.status(phase.client());
    while (s == null || !until.test(s)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            name + ": not " + what + " within " + FILL_LIMIT.toSeconds() + " s: " + s);
      }
      Thread.sleep(100);
      s = ep.status(phase.client());
    }
    return s;
  }
}
