package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * A wave of spot reclaims during a fill: a majority of the nodes (two of three, the coordinator's
 * node first) SIGKILLed within one second. The members left (one node and the client member) must
 * take the downing lease, down the dead and keep serving; new nodes start only once they have, as
 * capacity comes back later, and the fill goes on.
 */
final class MassPreemption {
  private static final Logger log = LoggerFactory.getLogger(MassPreemption.class);

  /** The fault's name in the report. */
  static final String KIND = "MASS_PREEMPTION";

  /** How long the members left may take to down the dead. */
  private static final Duration DOWNING = Duration.ofSeconds(120);

  private final Episode ep;
  private final Phase phase;
  private final ClientMember client;
  private final SplittableRandom random;

  MassPreemption(Episode ep, Phase phase, ClientMember client, SplittableRandom random) {
    this.ep = ep;
    this.phase = phase;
    this.client = client;
    this.random = random;
  }

  void inject() throws Exception {
    ChaosCluster cluster = ep.cluster();
    CacheStatus before = ep.status(client);
    boolean midFill = before != null && before.persistedRanges() < before.ranges();
    Set<Integer> persisted = Faults.persisted(ep.stored().segmentDir());
    Map<NodeProcess, Integer> marks = Faults.marks(cluster.live());
    List<NodeProcess> left = new ArrayList<>(cluster.live());
    int majority = left.size() / 2 + 1;
    List<NodeProcess> victims = new ArrayList<>();
    List<Integer> oldest = client.upPortsOldestFirst();
    NodeProcess coordinator = oldest.isEmpty() ? null : cluster.byPort(oldest.get(0));
    if (coordinator != null && left.remove(coordinator)) {
      victims.add(coordinator);
    }
    while (victims.size() < majority) {
      victims.add(left.remove(random.nextInt(left.size())));
    }
    String what = "ep" + ep.index() + " " + KIND + " of " + NodeProcess.names(victims);
    long t0 = System.nanoTime();
    for (NodeProcess v : victims) {
      v.kill();
    }
    long killedMs = (System.nanoTime() - t0) / 1_000_000;
    for (NodeProcess v : victims) {
      v.awaitExit(Duration.ofSeconds(10));
      cluster.gone(v);
    }
    log.info("{}: killed within {} ms", what, killedMs);
    long downed = phase.awaitDowned(victims, DOWNING) - t0;
    List<String> survivors = new ArrayList<>();
    boolean allAlive = true;
    for (NodeProcess n : left) {
      allAlive &= n.isAlive();
      survivors.add(n.name() + (n.isAlive() ? " alive" : " exited " + n.awaitExit(Duration.ZERO)));
    }
    ep.report()
        .check(
            what + ": the members left down the dead and keep running",
            allAlive && killedMs < 1_000,
            String.join(", ", survivors)
                + ", killed within "
                + killedMs
                + " ms, downed after "
                + downed / 1_000_000
                + " ms");
    List<NodeProcess> fresh = new ArrayList<>();
    for (int i = 0; i < victims.size(); i++) {
      fresh.add(cluster.launch()); // capacity back only after the decision
    }
    for (NodeProcess n : fresh) {
      cluster.awaitUp(n);
    }
    for (NodeProcess v : victims) {
      phase.awaitServing(v, Duration.ofSeconds(120));
    }
    phase.recovered(KIND, t0);
    long repeated = Faults.computedIn(cluster.live(), marks, ep.cache().cacheId(), persisted);
    ep.report().repeated += repeated;
    ep.report()
        .check(what + ": persisted ranges not recomputed", repeated == 0, repeated + " examples");
    ep.report().fault(new ChaosReport.Fault(ep.index(), KIND, midFill, downed / 1_000_000, -1));
  }
}
