package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.coordination.lease.TimeoutSettings;
import org.junit.jupiter.api.Test;
import org.tensorcache.lease.DatabaseLease;
import org.tensorcache.lease.LeaseDowningProvider;

/**
 * The downing each journal profile chooses, the relations between the lease's and the resolver's
 * timings that the postgres profile's comments give as the reasons for its numbers, and how long a
 * shard caught in a hand-off waits.
 */
class DowningProfilesTest {
  private static final String SBR = "pekko.cluster.split-brain-resolver";
  private static final Path DIR = Path.of("target", "cfg");

  /** The Split Brain Resolver decides on a tick of its own, once a second. */
  private static final Duration RESOLVER_TICK = Duration.ofSeconds(1);

  /** How often the downing of a member cut off one way looks at the records. */
  private static final Duration CUT_OFF_TICK = Duration.ofMillis(200);

  // how far apart the kills of one wave of spot reclaims may be seen by the survivors
  private static final Duration RECLAIM_WAVE = Duration.ofSeconds(5);

  @Test
  void postgresProfileDownsWithTheLeaseInTheDatabase() {
    for (List<String> profiles :
        List.of(List.of("cluster", "postgres"), List.of("tls", "cluster", "postgres"))) {
      Config c = NodeLauncher.config(profiles, Map.of(), DIR);
      assertEquals("lease-majority", c.getString(SBR + ".active-strategy"), profiles.toString());
      String lease = c.getString(SBR + ".lease-majority.lease-implementation");
      assertEquals(DatabaseLease.class.getName(), c.getString(lease + ".lease-class"));
      assertEquals(
          LeaseDowningProvider.class.getName(),
          c.getString("pekko.cluster.downing-provider-class"),
          profiles + ": a member cut off one way must be downed alone, not with the whole cycle");
    }
  }

  @Test
  void h2AndLocalProfilesKeepTheMajority() {
    for (List<String> profiles : List.of(List.of("cluster", "h2"), List.of("local"))) {
      Config c = NodeLauncher.config(profiles, Map.of(), DIR);
      assertEquals("keep-majority", c.getString(SBR + ".active-strategy"), profiles.toString());
      assertEquals(
          "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider",
          c.getString("pekko.cluster.downing-provider-class"),
          profiles.toString());
      assertEquals(Duration.ofSeconds(5), c.getDuration("pekko.cluster.down-removal-margin"));
    }
  }

  @Test
  void timingsOfThePostgresProfileKeepTheirReasons() {
    Config c = NodeLauncher.config(List.of("cluster", "postgres"), Map.of(), DIR);
    Config leaseConfig =
        c.getConfig(c.getString(SBR + ".lease-majority.lease-implementation"))
            .withFallback(c.getConfig("pekko.coordination.lease"));
    TimeoutSettings lease = TimeoutSettings.apply(leaseConfig); // Pekko's own checks
    Duration ttl = lease.getHeartbeatTimeout();
    Duration interval = lease.getHeartbeatInterval();
    Duration operation = lease.getOperationTimeout();
    Duration pause = c.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause");
    Duration stableAfter = c.getDuration(SBR + ".stable-after");
    Duration delay = c.getDuration(SBR + ".lease-majority.acquire-lease-delay-for-minority");
    Duration releaseAfter = c.getDuration(SBR + ".lease-majority.release-after");
    Duration margin = c.getDuration("pekko.cluster.down-removal-margin");
    Duration unstable = c.getDuration(SBR + ".down-all-when-unstable");
    // how far apart the two sides of a partition decide
    Duration spread =
        c.getDuration("pekko.cluster.failure-detector.heartbeat-interval")
            .plus(c.getDuration("pekko.cluster.gossip-interval"))
            .plus(RESOLVER_TICK);
    Duration otherSideFails = spread.plus(delay).plus(operation);

    assertTrue(
        ttl.compareTo(pause.plus(stableAfter)) < 0,
        "a holder dying with others must have lost the lease before the survivors decide: ttl "
            + ttl
            + ", pause + stable-after "
            + pause.plus(stableAfter));
    assertTrue(
        ttl.minus(interval.multipliedBy(2)).compareTo(spread.plus(delay)) > 0,
        "a lease that checkLease confirms must outlast the other side's attempt: ttl "
            + ttl
            + " - 2 x "
            + interval
            + " against "
            + spread.plus(delay));
    assertTrue(
        releaseAfter.compareTo(otherSideFails) > 0,
        "release-after "
            + releaseAfter
            + " must outlast the other side's attempt "
            + otherSideFails);
    assertTrue(
        unstable.compareTo(RECLAIM_WAVE.plus(delay).plus(operation)) > 0,
        "down-all-when-unstable "
            + unstable
            + " must outlast a reclaim wave seen "
            + RECLAIM_WAVE
            + " apart, the minority's delay and the lease statement, or the survivors of a mass"
            + " preemption down everyone");
    // a member that cannot receive: once its records have reached the others, the lowest of them
    // takes the lease (within lease-operation-timeout) and downs it after cut-off-member-after
    // (looked at every 200 ms); the downing must reach every member by gossip before the
    // resolvers' stable-after, counted from those records' arrival, runs out: each then waits
    // stable-after again, and the member is removed
    Duration cutOff =
        c.getDuration("tensorcache.downing.cut-off-member-after")
            .plus(CUT_OFF_TICK)
            .plus(operation)
            .plus(c.getDuration("pekko.cluster.gossip-interval"));
    assertTrue(
        cutOff.compareTo(stableAfter) < 0,
        "a member cut off one way must be downed ("
            + cutOff
            + ") before the resolver's stable-after "
            + stableAfter
            + " runs out and it downs every member of the cycle, the healthy ones too");
    assertTrue(
        cutOff.compareTo(stableAfter.plus(delay)) < 0,
        "and before that member, alone on its side, tries the lease: " + stableAfter.plus(delay));
    assertTrue(
        margin.compareTo(otherSideFails.plusSeconds(2)) >= 0,
        "down-removal-margin "
            + margin
            + " must cover the other side's attempt and its stop: "
            + otherSideFails.plusSeconds(2));
  }

  /**
   * A shard stuck in a hand-off from a node that vanished is allocated again once the hand-off
   * times out and the next rebalance round runs; a lookup waiting for its values must still be
   * waiting then (Pekko's default of 60 s is past the lookup timeout).
   */
  @Test
  void aShardStuckInAHandOffGetsAHomeBeforeLookupsGiveUp() {
    for (List<String> profiles :
        List.of(List.of("cluster", "h2"), List.of("cluster", "postgres"))) {
      Config c = NodeLauncher.config(profiles, Map.of(), DIR);
      Duration stuck =
          c.getDuration("pekko.cluster.sharding.handoff-timeout")
              .plus(c.getDuration("pekko.cluster.sharding.rebalance-interval"));
      Duration lookup = c.getDuration("tensorcache.lookup.timeout");
      assertTrue(
          stuck.compareTo(lookup) < 0,
          profiles
              + ": handoff-timeout + rebalance-interval "
              + stuck
              + " must be under the lookup timeout "
              + lookup);
    }
  }
}
