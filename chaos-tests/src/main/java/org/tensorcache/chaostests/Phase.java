package org.tensorcache.chaostests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * One life of the cluster in an episode: three nodes and the client member start, the fill runs
 * under faults, and the checks follow it.
 */
final class Phase {
  private static final int NODES = 3;
  private final Episode ep;
  private ClientMember client;
  private LookupLoop lookups;
  private long lastFault;

  Phase(Episode ep) {
    this.ep = ep;
  }

  /**
   * Starts three nodes at once (the first seeds the cluster), the client member, lookups, the fill.
   */
  void start() throws Exception {
    ChaosCluster cluster = ep.cluster();
    List<NodeProcess> nodes = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      nodes.add(cluster.launch()); // the first seeds itself, the others retry joining it
    }
    for (NodeProcess n : nodes) {
      cluster.awaitUp(n);
    }
    client =
        ClientMember.join(
            cluster.livePorts(), dataDir(), ep.pg(), ep.cache(), cluster.inJvmMember());
    lookups = new LookupLoop(client, ep.reference(), ep.cache().spec().n(), ep.random().split());
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!client.startFill(Duration.ofSeconds(5))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the coordinator did not accept the fill within 120 s");
      }
    }
  }

  private java.nio.file.Path dataDir() {
    return ep.cache().segmentDir().getParent().getParent();
  }

  /** Injects one fault, starts a replacement at once and waits until the cluster serves again. */
  void inject(Faults.Kind kind) throws Exception {
    ChaosCluster cluster = ep.cluster();
    CacheStatus before = ep.status(client);
    boolean midFill = before != null && before.persistedRanges() < before.ranges();
    Set<Integer> persisted = Faults.persisted(ep.stored().segmentDir());
    Map<NodeProcess, Integer> marks = Faults.marks(cluster.live());
    List<NodeProcess> live = cluster.live();
    NodeProcess victim;
    if (kind == Faults.Kind.SIGKILL_COORDINATOR) {
      List<Integer> ports = client.upPortsOldestFirst();
      victim = ports.isEmpty() ? live.get(0) : cluster.byPort(ports.get(0));
    } else {
      victim = live.get(ep.random().nextInt(live.size()));
    }
    long t0 = System.nanoTime();
    switch (kind) {
      case SIGKILL_COMPUTE, SIGKILL_COORDINATOR -> victim.kill();
      case SIGTERM_COMPUTE -> victim.signal("TERM");
      case SIGSTOP_COMPUTE -> victim.signal("STOP");
    }
    cluster.gone(victim);
    NodeProcess replacement = cluster.launch(); // joins while the victim is dying
    cluster.awaitUp(replacement);
    long served = awaitServing(victim, Duration.ofSeconds(120));
    recovered(kind.name(), t0);
    if (kind == Faults.Kind.SIGSTOP_COMPUTE) {
      victim.signal("CONT");
      int code = victim.awaitExit(Duration.ofSeconds(60));
      ep.report()
          .check(
              "ep" + ep.index() + " stopped node ends itself once continued",
              code >= 0,
              victim.name() + " exit " + code);
      victim.forceStop();
    } else if (kind == Faults.Kind.SIGTERM_COMPUTE) {
      int code = victim.awaitExit(Duration.ofSeconds(60));
      ep.report()
          .check(
              "ep" + ep.index() + " SIGTERM exits 0", code == 0, victim.name() + " exit " + code);
    }
    long repeated = Faults.computedIn(cluster.live(), marks, ep.cache().cacheId(), persisted);
    ep.report().repeated += repeated;
    ep.report()
        .check(
            "ep" + ep.index() + " " + kind + " persisted ranges not recomputed",
            repeated == 0,
            repeated + " examples");
    lastFault = t0;
    ep.report()
        .fault(
            new ChaosReport.Fault(ep.index(), kind.name(), midFill, (served - t0) / 1_000_000, -1));
  }

  /** Cuts nodes off the network, heals it and replaces them once they ended: PartitionFault. */
  void inject(PartitionFault.Kind kind, java.util.SplittableRandom random) throws Exception {
    lastFault = System.nanoTime();
    new PartitionFault(ep, this, client, random).inject(kind);
  }

  /** Waits until the victim is out, every member reachable and the coordinator answers. */
  long awaitServing(NodeProcess victim, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      List<Integer> up = client.upPortsOldestFirst();
      if (!up.contains(victim.port())
          && !client.anyUnreachable()
          && up.size() >= NODES
          && ep.status(client) != null) {
        return System.nanoTime();
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "cluster not serving again within "
            + within.toSeconds()
            + " s after a fault on "
            + victim.name()
            + " (port "
            + victim.port()
            + "): up "
            + client.upPortsOldestFirst()
            + ", any unreachable "
            + client.anyUnreachable()
            + ", coordinator status "
            + ep.status(client));
  }

  /**
   * Waits until the client member sees none of {@code gone} Up, every member reachable and the
   * coordinator answering; the nano time then.
   */
  long awaitDowned(List<NodeProcess> gone, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      List<Integer> up = client.upPortsOldestFirst();
      if (gone.stream().noneMatch(v -> up.contains(v.port()))
          && !client.anyUnreachable()
          && ep.status(client) != null) {
        return System.nanoTime();
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        NodeProcess.names(gone)
            + " not downed within "
            + within.toSeconds()
            + " s: up "
            + client.upPortsOldestFirst()
            + ", any unreachable "
            + client.anyUnreachable());
  }

  /** A majority of the nodes SIGKILLed at once, new ones later: {@link MassPreemption}. */
  void injectMassPreemption(java.util.SplittableRandom random) throws Exception {
    lastFault = System.nanoTime();
    new MassPreemption(ep, this, client, random).inject();
  }

  /**
   * Records the time from {@code since} (nanos) to the first lookup served after it; nothing when
   * this phase's lookups have stopped (a fault after the fill, as a cloud episode's replacement).
   */
  void recovered(String kind, long since) throws InterruptedException {
    if (lookups == null) {
      return;
    }
    long ms = lookups.servedAfter(since, Duration.ofSeconds(120));
    ep.report().check("ep" + ep.index() + " " + kind + " serving again", ms >= 0, ms + " ms");
    ep.report().recovery.add(kind, ms);
  }

  /** The client member (null once closed). */
  ClientMember client() {
    return client;
  }

  /** Nanos when the coordinator first answered after {@code since}. */
  long servingSince(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }

  /** Waits for every range to be persisted, then checks lookups and segments. */
  void finish(String what) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
    CacheStatus s = ep.status(client);
    while (s == null || s.persistedRanges() < s.ranges()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(what + ": fill not complete within 300 s: " + s);
      }
      Thread.sleep(250);
      s = ep.status(client);
    }
    if (lastFault != 0) {
      var faults = ep.report().faults;
      var f = faults.get(faults.size() - 1);
      faults.set(
          faults.size() - 1,
          new ChaosReport.Fault(
              f.episode(),
              f.kind(),
              f.midFill(),
              f.servingAgainMs(),
              (System.nanoTime() - lastFault) / 1_000_000));
    }
    stopLookups(what);
    ChaosReport r = ep.report();
    ExpectedValues.SegmentCheck c = ep.reference().checkSegments(ep.stored());
    r.lost += c.lost();
    r.wrong += c.wrong();
    r.corruptLoaded += c.rejectedRanges().size();
    r.check(
        what + ": segments equal the reference",
        c.lost() == 0 && c.wrong() == 0 && c.rejectedRanges().isEmpty(),
        "lost " + c.lost() + " wrong " + c.wrong() + " rejected " + c.rejectedRanges());
  }

  /** Stops the lookups of this phase and checks them: every one served, every value right. */
  void stopLookups(String what) throws InterruptedException {
    if (lookups == null) {
      return;
    }
    lookups.close();
    ChaosReport r = ep.report();
    r.lookups += lookups.lookups.get();
    r.lookupFailures += lookups.failures.get();
    r.wrong += lookups.wrong.get();
    r.check(
        what + ": lookups equal the reference",
        lookups.wrong.get() == 0,
        lookups.lookups.get()
            + " lookups, "
            + lookups.wrong.get()
            + " wrong values, "
            + lookups.failures.get()
            + " failed");
    // a lookup waits for a range's new home after a fault: none may fail, whatever was killed
    r.check(
        what + ": every lookup served",
        lookups.failures.get() == 0,
        lookups.failures.get()
            + " of "
            + (lookups.lookups.get() + lookups.failures.get())
            + " failed");
    lookups = null;
  }

  /**
   * Looks every example up, a range at a time, through the client member (each lookup blocks until
   * its values are there); the values that differ from the reference in any bit.
   */
  long lookUpAll() {
    long n = ep.cache().spec().n();
    int step = ep.cache().spec().rangeSize();
    long wrong = 0;
    for (long start = 0; start < n; start += step) {
      long[] indices = new long[(int) Math.min(step, n - start)];
      for (int i = 0; i < indices.length; i++) {
        indices[i] = start + i;
      }
      wrong += ep.reference().mismatches(client.lookup(indices));
    }
    return wrong;
  }

  /** Stops the client member (before the cluster goes, so it never stays alone). */
  void closeClient() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  /** Stops the client member and SIGTERMs every node; each must exit 0. */
  void stopGracefully() throws Exception {
    closeClient();
    for (NodeProcess n : ep.cluster().live()) {
      n.signal("TERM");
    }
    for (NodeProcess n : ep.cluster().live()) {
      int code = n.awaitExit(Duration.ofSeconds(60));
      ep.report()
          .check("ep" + ep.index() + " SIGTERM exits 0", code == 0, n.name() + " exit " + code);
      ep.cluster().gone(n);
      n.forceStop();
    }
  }
}
