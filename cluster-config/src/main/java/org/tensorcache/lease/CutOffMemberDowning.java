package org.tensorcache.lease;

import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.AbstractActorWithTimers;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.Reachability;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.japi.pf.ReceiveBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The downing actor of {@link LeaseDowningProvider}: Pekko's Split Brain Resolver (lease-majority)
 * as its child, and beside it one decision of its own, for a member cut off one way.
 *
 * <p>When every unreachability record runs through one member ({@link CutOffMember}) and that has
 * held for {@code tensorcache.downing.cut-off-member-after}, the member with the lowest address
 * among the others takes the resolver's lease (the same lease, same owner) and downs that one
 * member. The resolver itself would wait stable-after and then down every member of the cycle; the
 * downing resets its wait, and the member is removed, with its records, before that runs out. The
 * cut-off member cannot take the lease then: it downs itself, as after any lost partition. When the
 * lease is not taken here, the resolver decides as it would have.
 */
final class CutOffMemberDowning extends AbstractActorWithTimers {
  private static final Logger log = LoggerFactory.getLogger(CutOffMemberDowning.class);
  private static final Object TICK = "tick";

  /** How often the records are looked at: a fraction of the margin to the resolver's decision. */
  static final Duration TICK_INTERVAL = Duration.ofMillis(200);

  private static final Object RELEASE = "release";

  /** The longest the lease is held, in release-afters, when the downed member is never removed. */
  private static final int HOLD_AT_MOST = 4;

  private record Taken(UniqueAddress member, boolean taken, Throwable failure) {}

  private final Cluster cluster = Cluster.get(getContext().getSystem());
  private final Props resolver;
  private final Lease lease;
  private final Duration after;
  private final Duration releaseAfter;
  private Reachability reachability = Reachability.empty();
  private Optional<UniqueAddress> candidate = Optional.empty();
  private long candidateSince;

  static Props props(Props resolver, Lease lease, Duration after, Duration releaseAfter) {
    return Props.create(
        CutOffMemberDowning.class,
        () -> new CutOffMemberDowning(resolver, lease, after, releaseAfter));
  }

  private CutOffMemberDowning(Props resolver, Lease lease, Duration after, Duration releaseAfter) {
    this.resolver = resolver;
    this.lease = lease;
    this.after = after;
    this.releaseAfter = releaseAfter;
  }

  @Override
  public void preStart() {
    getContext().actorOf(resolver.withDispatcher(getContext().getProps().dispatcher()), "resolver");
    cluster.subscribe(
        getSelf(),
        ClusterEvent.initialStateAsSnapshot(),
        ClusterEvent.ReachabilityChanged.class,
        ClusterEvent.MemberRemoved.class);
    getTimers().startTimerWithFixedDelay(TICK, TICK, TICK_INTERVAL);
  }

  @Override
  public void postStop() {
    cluster.unsubscribe(getSelf());
  }

  @Override
  public Receive createReceive() {
    return watching();
  }

  /** Watching the records for a member they all run through. */
  private Receive watching() {
    return withCommon(receiveBuilder().matchEquals(TICK, t -> tick()));
  }

  /** Taking the lease before downing the member found. */
  private Receive taking() {
    return withCommon(receiveBuilder().match(Taken.class, t -> taken(t)));
  }

  /**
   * Holding the lease until {@code member} is removed, and release-after more; at most {@link
   * #HOLD_AT_MOST} release-afters in all, since a lease kept renewed would make every later
   * decision of another member fail.
   */
  private Receive holding(UniqueAddress member) {
    return withCommon(
        receiveBuilder()
            .match(
                ClusterEvent.MemberRemoved.class,
                m -> {
                  if (m.member().uniqueAddress().equals(member)) {
                    getTimers().startSingleTimer(RELEASE, RELEASE, releaseAfter);
                  }
                })
            .matchEquals(
                RELEASE,
                r -> {
                  lease.release();
                  candidate = Optional.empty();
                  getContext().become(watching());
                }));
  }

  /** The cases every state has: the records kept, the rest (a tick of another state) ignored. */
  private Receive withCommon(ReceiveBuilder builder) {
    return builder
        .match(ClusterEvent.ReachabilityChanged.class, r -> reachability = r.reachability())
        .matchAny(m -> {})
        .build();
  }

  private void tick() {
    Optional<UniqueAddress> found = toDown();
    if (!found.equals(candidate)) {
      candidate = found;
      candidateSince = System.nanoTime();
      found.ifPresent(
          m ->
              log.info(
                  "every unreachability record runs through {}: it is cut off one way; downing it"
                      + " alone in {} ms unless that changes",
                  m.address(),
                  after.toMillis()));
      return;
    }
    if (found.isPresent() && System.nanoTime() - candidateSince >= after.toNanos()) {
      UniqueAddress member = found.get();
      getContext().become(taking());
      lease
          .acquire()
          .whenComplete(
              (ok, failure) ->
                  getSelf().tell(new Taken(member, failure == null && ok, failure), getSelf()));
    }
  }

  private void taken(Taken t) {
    if (!t.taken()) {
      log.info(
          "lease not taken to down {} ({}): the Split Brain Resolver decides",
          t.member().address(),
          t.failure() == null ? "held by another member" : t.failure().toString());
      candidate = Optional.empty();
      getContext().become(watching());
      return;
    }
    log.info("took the lease: downing {}, cut off one way", t.member().address());
    cluster.down(t.member().address());
    getContext().become(holding(t.member()));
    // removed already (it downed itself meanwhile, its removal not seen in this state): release
    // after release-after from now; otherwise the removal shortens this bound
    boolean gone = !isMember(members(), t.member());
    getTimers()
        .startSingleTimer(
            RELEASE, RELEASE, gone ? releaseAfter : releaseAfter.multipliedBy(HOLD_AT_MOST));
  }

  /**
   * The member all records run through, when this member is the one to down it: not itself, and the
   * lowest address among the members left, so that one member decides.
   */
  private Optional<UniqueAddress> toDown() {
    List<Member> members = members();
    List<Map.Entry<UniqueAddress, UniqueAddress>> records = new ArrayList<>();
    for (Reachability.Record r : CollectionConverters.asJava(reachability.records())) {
      boolean unreachable =
          r.status() == Reachability.Unreachable$.MODULE$
              || r.status() == Reachability.Terminated$.MODULE$;
      if (unreachable && isMember(members, r.observer()) && isMember(members, r.subject())) {
        records.add(new AbstractMap.SimpleImmutableEntry<>(r.observer(), r.subject()));
      }
    }
    Optional<UniqueAddress> cutOff = CutOffMember.of(records);
    if (cutOff.isEmpty() || cutOff.get().equals(cluster.selfUniqueAddress())) {
      return Optional.empty();
    }
    // an Up member decides: a leaving one would hand the decision on, its wait started again
    Optional<Member> decider =
        members.stream()
            .filter(m -> m.status() == MemberStatus.up())
            .filter(m -> !m.uniqueAddress().equals(cutOff.get()))
            .min((a, b) -> Member.addressOrdering().compare(a.address(), b.address()));
    boolean mine =
        decider.isPresent() && decider.get().uniqueAddress().equals(cluster.selfUniqueAddress());
    return mine ? cutOff : Optional.empty();
  }

  /** The members that may observe or be observed: Up or Leaving. */
  private List<Member> members() {
    List<Member> members = new ArrayList<>();
    StreamSupport.stream(cluster.state().getMembers().spliterator(), false)
        .filter(m -> m.status() == MemberStatus.up() || m.status() == MemberStatus.leaving())
        .forEach(members::add);
    return members;
  }

  private static boolean isMember(List<Member> members, UniqueAddress a) {
    return members.stream().anyMatch(m -> m.uniqueAddress().equals(a));
  }
}
