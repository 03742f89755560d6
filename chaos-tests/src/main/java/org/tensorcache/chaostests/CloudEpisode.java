package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * An episode of a cluster that shares no disk: every node on an empty data directory of its own,
 * segments in object storage, the journal in PostgreSQL. Once the fill is done the whole cluster is
 * preempted: every node SIGKILLed and its data directory deleted, then three fresh nodes start on
 * new empty ones and must restore every range from object storage, computing none again.
 */
final class CloudEpisode {
  /** What happens before the preemption. */
  enum Plan {
    /** Mid-fill, the object store and then the journal stop for {@link Outage#LENGTH}. */
    OUTAGES,
    /** After the fill, one node is SIGKILLed and replaced by a fresh one on an empty directory. */
    REPLACE_NODE
  }

  static final String PREEMPT = "PREEMPT_ALL_WIPE";
  static final String STORE_DOWN = "OBJECT_STORE_OUTAGE";
  static final String JOURNAL_DOWN = "JOURNAL_OUTAGE";
  static final String REPLACE = "REPLACE_NODE_EMPTY_DIR";

  private static final Duration FILL_LIMIT = Duration.ofSeconds(300);

  private final ChaosRun.Episode ep;
  private final ObjectStore store;
  private final Postgres pg;
  private final String name;

  CloudEpisode(ChaosRun.Episode ep, ObjectStore store, Postgres pg) {
    this.ep = ep;
    this.store = store;
    this.pg = pg;
    this.name = "ep" + ep.index();
  }

  void run(Plan plan) throws Exception {
    ChaosReport report = ep.report();
    Phase fill = new Phase(ep);
    fill.start();
    List<Outage> outages = new ArrayList<>();
    if (plan == Plan.OUTAGES) {
      awaitPersisted(fill, 2); // some segments written before the store goes, most after
      outages.add(Outage.of(ep, fill, STORE_DOWN, store::stop, store::start));
      if (pg.ownServer()) {
        outages.add(Outage.of(ep, fill, JOURNAL_DOWN, pg::stop, pg::start));
      } else {
        report.skip(
            JOURNAL_DOWN,
            "the journal's PostgreSQL is the one TENSORCACHE_PG_URL names, not this run's to stop,"
                + " and none of its own can be started here (Debian's postgresql, as root)");
      }
    }
    fill.finish(name + " fill, segments in object storage");
    for (Outage o : outages) {
      check(o);
    }
    if (plan == Plan.REPLACE_NODE) {
      replaceNode(fill);
    }
    Phase restart = preemptAll(fill);
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
   * Preempts the whole cluster and deletes every local data directory (the client member's copies
   * of segments too), then starts three fresh nodes; the restored cluster's phase.
   */
  private Phase preemptAll(Phase fill) throws Exception {
    ChaosCluster cluster = ep.cluster();
    ChaosReport report = ep.report();
    Set<Integer> done = Faults.persisted(ep.stored().segmentDir());
    fill.closeClient();
    cluster.killAll();
    for (NodeProcess n : cluster.all()) {
      cluster.deleteDataDir(n);
    }
    ChaosCluster.deleteTree(ep.cache().segmentDir());
    long t0 = System.nanoTime(); // the first fresh node process starts now
    Phase restart = new Phase(ep);
    restart.start();
    long upMs = (System.nanoTime() - t0) / 1_000_000;
    long deadline = System.nanoTime() + FILL_LIMIT.toNanos();
    CacheStatus s = ep.status(restart.client());
    while (s == null || !s.restored() || s.persistedRanges() < s.ranges()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            name + ": not restored within " + FILL_LIMIT.toSeconds() + " s: " + s);
      }
      Thread.sleep(100);
      s = ep.status(restart.client());
    }
    long restoredMs = (System.nanoTime() - t0) / 1_000_000;
    long wrong = restart.lookUpAll();
    long servedMs = (System.nanoTime() - t0) / 1_000_000;
    report.wrong += wrong;
    Set<Integer> again =
        Faults.rangesComputedIn(cluster.live(), Map.of(), ep.cache().cacheId(), done);
    report.recomputed(PREEMPT, again.size());
    report.coldStarts.add(
        new ChaosReport.ColdStart(
            ep.index(),
            s.ranges(),
            ep.cache().spec().n(),
            upMs,
            restoredMs,
            servedMs,
            again.size()));
    report.fault(new ChaosReport.Fault(ep.index(), PREEMPT, false, restoredMs, servedMs));
    report.check(
        name + " " + PREEMPT + ": every range was in object storage",
        done.size() == s.ranges(),
        done.size() + " of " + s.ranges());
    report.check(
        name + " " + PREEMPT + ": persisted ranges not recomputed",
        again.isEmpty(),
        again.size() + " of " + done.size() + " " + again);
    report.check(
        name + " " + PREEMPT + ": every value equals the reference", wrong == 0, "" + wrong);
    restart.finish(name + " cold start on empty data directories");
    return restart;
  }

  private void awaitPersisted(Phase phase, int ranges) throws InterruptedException {
    long deadline = System.nanoTime() + FILL_LIMIT.toNanos();
    CacheStatus s = ep.status(phase.client());
    while (s == null || s.persistedRanges() < ranges) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            name + ": not " + ranges + " ranges persisted within 300 s: " + s);
      }
      Thread.sleep(200);
      s = ep.status(phase.client());
    }
  }
}
