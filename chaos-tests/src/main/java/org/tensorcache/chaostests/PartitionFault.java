package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * A network partition of a running fill: a minority of the nodes ({@code (n - 1) / 2}, so one of
 * three) is cut off through the {@link PartitionProxy}s, the cut held until the majority (with the
 * client member) has downed it and the cut-off nodes have ended themselves (lease-majority: they
 * cannot take the lease; a node that cannot receive is downed alone by the member that decides),
 * then healed; the ended nodes are replaced by new ones, as after a crash.
 */
final class PartitionFault {
  private static final Logger log = LoggerFactory.getLogger(PartitionFault.class);

  /** The partitions a fill meets. */
  enum Kind {
    /** Neither side reaches the other. */
    PARTITION_SYMMETRIC(Network.Cut.SYMMETRIC),
    /** The cut-off nodes receive but cannot send. */
    PARTITION_NO_SEND(Network.Cut.NO_SEND),
    /** The cut-off nodes send but cannot receive. */
    PARTITION_NO_RECEIVE(Network.Cut.NO_RECEIVE);

    final Network.Cut cut;

    Kind(Network.Cut cut) {
      this.cut = cut;
    }
  }

  /**
   * The kinds the chaos runs schedule, in turn: a node that cannot receive first, the case the
   * downing of a cut-off member exists for, so that the shortest run meets it.
   */
  static final List<Kind> SCHEDULED =
      List.of(Kind.PARTITION_NO_RECEIVE, Kind.PARTITION_SYMMETRIC, Kind.PARTITION_NO_SEND);

  /** How long a cut-off node may take to end itself once the majority has downed it. */
  private static final Duration ENDING = Duration.ofSeconds(60);

  private final Episode ep;
  private final Phase phase;
  private final ClientMember client;
  private final SplittableRandom random;

  PartitionFault(Episode ep, Phase phase, ClientMember client, SplittableRandom random) {
    this.ep = ep;
    this.phase = phase;
    this.client = client;
    this.random = random;
  }

  void inject(Kind kind) throws Exception {
    ChaosCluster cluster = ep.cluster();
    Network network = cluster.partitionable();
    CacheStatus before = ep.status(client);
    boolean midFill = before != null && before.persistedRanges() < before.ranges();
    Set<Integer> persisted = Faults.persisted(ep.cache().segmentDir());
    Map<NodeProcess, Integer> marks = Faults.marks(cluster.live());
    List<NodeProcess> live = new ArrayList<>(cluster.live());
    List<NodeProcess> cutOff = new ArrayList<>();
    Set<String> hosts = new HashSet<>();
    for (int i = 0; i < Math.max(1, (live.size() - 1) / 2); i++) {
      NodeProcess v = live.remove(random.nextInt(live.size()));
      if (cluster.host(v) == null) {
        throw new IllegalStateException(v.name() + " is behind no proxy: it cannot be cut off");
      }
      cutOff.add(v);
      hosts.add(cluster.host(v));
    }
    String what = "ep" + ep.index() + " " + kind + " of " + NodeProcess.names(cutOff);
    long t0 = System.nanoTime();
    network.cut(kind.cut, hosts);
    log.info("{}: cut", what);
    long downed;
    boolean endedCutOff;
    try {
      downed = phase.awaitDowned(cutOff, Duration.ofSeconds(120)) - t0;
      endedCutOff = awaitEnded(cutOff, ENDING);
    } finally {
      network.heal();
    }
    long healed = System.nanoTime() - t0;
    log.info(
        "{}: healed after {} ms, majority serving after {} ms",
        what,
        healed / 1_000_000,
        downed / 1_000_000);
    // one that ends only after the heal would have lingered as long as the partition lasted
    boolean lingered = !endedCutOff && awaitEnded(cutOff, ENDING);
    StringBuilder codes = new StringBuilder();
    for (NodeProcess v : cutOff) {
      codes.append(v.name()).append(" exit ").append(v.awaitExit(Duration.ZERO)).append(' ');
      cluster.gone(v);
      v.forceStop();
    }
    ep.report()
        .check(
            what + ": cut-off nodes downed and ended while cut off",
            endedCutOff,
            codes
                + (endedCutOff ? "while cut off" : lingered ? "only after the heal" : "not ended")
                + ", majority serving after "
                + downed / 1_000_000
                + " ms, healed after "
                + healed / 1_000_000
                + " ms");
    List<NodeProcess> replacements = new ArrayList<>();
    for (int i = 0; i < cutOff.size(); i++) {
      replacements.add(cluster.launch());
    }
    for (NodeProcess r : replacements) {
      cluster.awaitUp(r);
    }
    for (NodeProcess v : cutOff) {
      phase.awaitServing(v, Duration.ofSeconds(120));
    }
    phase.recovered(kind.name(), t0);
    long repeated = Faults.computedIn(cluster.live(), marks, ep.cache().cacheId(), persisted);
    ep.report().repeated += repeated;
    ep.report()
        .check(what + ": persisted ranges not recomputed", repeated == 0, repeated + " examples");
    ep.report()
        .fault(new ChaosReport.Fault(ep.index(), kind.name(), midFill, downed / 1_000_000, -1));
  }

  /** Whether every one of {@code nodes} has exited within {@code within}. */
  private static boolean awaitEnded(List<NodeProcess> nodes, Duration within)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    for (NodeProcess n : nodes) {
      long left = Math.max(0, deadline - System.nanoTime());
      if (n.awaitExit(Duration.ofNanos(left)) < 0) {
        return false;
      }
    }
    return true;
  }
}
