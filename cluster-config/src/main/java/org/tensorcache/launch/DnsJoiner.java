package org.tensorcache.launch;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.JoinSeedNodes;
import org.apache.pekko.cluster.typed.Subscribe;
import scala.concurrent.duration.FiniteDuration;

/**
 * Joins this member to the cluster at the addresses of a DNS name ({@code --seeds dns:NAME}): a
 * node needs no fixed seed list, only a name that has one record per node (a Kubernetes headless
 * service).
 *
 * <p>Pekko Management's Cluster Bootstrap does this usually, but its discovery module is not
 * released for Pekko 1.7 and Pekko refuses mixed module versions. So this actor does the part that
 * matters, with Pekko's own seed-node join: until the member has joined, every {@code
 * resolve-interval} it resolves the name again (a pod can start before its peers' records exist)
 * and, when the addresses changed, hands them to {@link JoinSeedNodes}:
 *
 * <ul>
 *   <li>as a list without this member: Pekko asks them all ({@code InitJoin}) again and again and
 *       joins the first that answers as a member of a cluster. A member that has not joined answers
 *       "not yet", so nodes that only join can never make a cluster among themselves;
 *   <li>with this member first, only on the member with the lowest address among them, once the
 *       addresses have stayed the same for {@code stable-margin} and number at least {@code
 *       required-contacts}: Pekko asks the others first and joins the cluster of any that answers
 *       as a member; only when all answer "not yet" or none answers within {@code
 *       pekko.cluster.seed-node-timeout} does this member join itself, forming the cluster.
 * </ul>
 *
 * <p>So when nodes start together one cluster forms, by the lowest; a lowest node that starts later
 * (a preempted pod that comes back) finds the cluster and joins it. Two clusters need two members
 * that each take themselves for the lowest, which only partial views of the name allow: the stable
 * margin makes that unlikely; {@code required-contacts} set to the number of nodes starting
 * together rules it out. A client member ({@code status}, {@code fill}) never forms one.
 *
 * <p>Resolving blocks, so this actor runs on Pekko's blocking I/O dispatcher. It stops once the
 * member is in the cluster. Not joined within {@code
 * pekko.cluster.shutdown-after-unsuccessful-join-seed-nodes} of its start, it shuts the member down
 * (Pekko's own deadline for that restarts with every new list, so it is kept here).
 */
public final class DnsJoiner extends AbstractBehavior<DnsJoiner.Command> {
  /** What this actor handles: only its own timers and cluster events. */
  public interface Command {}

  private interface Internal extends Command {}

  private enum Resolve implements Internal {
    INSTANCE
  }

  private enum GiveUp implements Internal {
    INSTANCE
  }

  private record MemberChanged(ClusterEvent.MemberEvent event) implements Internal {}

  private final DnsSeeds seeds;
  private final DnsLookup lookup;
  private final DiscoverySettings settings;
  private final boolean mayForm;
  private final Cluster cluster;
  private final Address self;
  private List<InetAddress> resolved;
  private long changedAt;
  private List<Address> joining = List.of();
  private String lastProblem = "";

  private DnsJoiner(
      ActorContext<Command> context, DnsSeeds seeds, DiscoverySettings settings, boolean mayForm) {
    super(context);
    this.seeds = seeds;
    this.settings = settings;
    this.mayForm = mayForm;
    this.lookup = DnsLookup.of(settings.dnsServer());
    this.cluster = Cluster.get(context.getSystem());
    this.self = cluster.selfMember().address();
    // its own name, not Pekko's ActorCell: the nodes log Pekko's classes at WARN only
    context.setLoggerName(DnsJoiner.class);
  }

  /**
   * Starts joining the member of {@code system} through {@code seeds} (their port given); {@code
   * mayForm}: a node that may form the cluster, false for a client. The system's {@code
   * pekko.cluster.seed-nodes} must be empty.
   */
  public static void start(ActorSystem<?> system, DnsSeeds seeds, boolean mayForm) {
    DiscoverySettings settings = DiscoverySettings.fromConfig(system.settings().config());
    system.systemActorOf(
        create(seeds, settings, mayForm),
        "tensorcache-dns-joiner-" + UUID.randomUUID(),
        DispatcherSelector.blocking());
  }

  static Behavior<Command> create(DnsSeeds seeds, DiscoverySettings settings, boolean mayForm) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  Cluster cluster = Cluster.get(context.getSystem());
                  cluster
                      .subscriptions()
                      .tell(
                          Subscribe.create(
                              context.messageAdapter(
                                  ClusterEvent.MemberEvent.class, MemberChanged::new),
                              ClusterEvent.MemberEvent.class));
                  timers.startTimerWithFixedDelay(
                      Resolve.INSTANCE, Duration.ZERO, settings.resolveInterval());
                  giveUpAfter(context.getSystem(), timers);
                  return new DnsJoiner(context, seeds, settings, mayForm);
                }));
  }

  private static void giveUpAfter(ActorSystem<?> system, TimerScheduler<Command> timers) {
    scala.concurrent.duration.Duration limit =
        org.apache.pekko.cluster.Cluster.get(system)
            .settings()
            .ShutdownAfterUnsuccessfulJoinSeedNodes();
    if (limit instanceof FiniteDuration finite) {
      timers.startSingleTimer(GiveUp.INSTANCE, Duration.ofNanos(finite.toNanos()));
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Resolve.class, m -> onResolve())
        .onMessage(MemberChanged.class, this::onMemberChanged)
        .onMessage(GiveUp.class, m -> onGiveUp())
        .build();
  }

  private Behavior<Command> onResolve() {
    List<InetAddress> now;
    try {
      now = lookup.resolve(seeds.name());
    } catch (IOException e) {
      warnOnce(
          e.getMessage() + "; asking again every " + settings.resolveInterval().toMillis() + " ms");
      return this;
    }
    lastProblem = "";
    if (!now.equals(resolved)) {
      resolved = now;
      changedAt = System.nanoTime();
      if (now.isEmpty()) {
        getContext()
            .getLog()
            .info(
                "{} resolves to no address yet; asking again every {} ms",
                seeds,
                settings.resolveInterval().toMillis());
      } else {
        getContext().getLog().info("{} resolves to {}", seeds, texts(now));
      }
    }
    boolean stable = System.nanoTime() - changedAt >= settings.stableMargin().toNanos();
    List<Address> plan =
        seedNodes(self, mayForm, now, seeds.port(), stable, settings.requiredContacts());
    if (!plan.isEmpty() && !plan.equals(joining)) {
      joining = plan;
      if (plan.get(0).equals(self)) {
        getContext()
            .getLog()
            .info(
                "{}: this member has the lowest of {} addresses; it joins the cluster of any other"
                    + " that answers as a member, else forms the cluster",
                seeds,
                now.size());
      } else {
        getContext().getLog().info("{}: joining the cluster through {}", seeds, plan);
      }
      cluster.manager().tell(new JoinSeedNodes(plan));
    }
    return this;
  }

  private Behavior<Command> onMemberChanged(MemberChanged changed) {
    if (!changed.event().member().address().equals(self)) {
      return this;
    }
    getContext().getLog().info("{}: member of the cluster ({})", seeds, changed.event().member());
    return Behaviors.stopped();
  }

  private Behavior<Command> onGiveUp() {
    getContext()
        .getLog()
        .warn(
            "{}: not joined within pekko.cluster.shutdown-after-unsuccessful-join-seed-nodes,"
                + " last resolved to {}; shutting down",
            seeds,
            resolved == null ? "nothing" : texts(resolved));
    CoordinatedShutdown.get(getContext().getSystem())
        .run(CoordinatedShutdown.clusterJoinUnsuccessfulReason());
    return Behaviors.stopped();
  }

  /** Logs {@code problem} once, not on every attempt that meets it again. */
  private void warnOnce(String problem) {
    if (!problem.equals(lastProblem)) {
      lastProblem = problem;
      getContext().getLog().warn(problem);
    }
  }

  /**
   * The seed nodes of one join attempt of {@code self}, from the addresses {@code resolved} of the
   * name and the members' {@code port}: {@code self} first (it may form the cluster) only when
   * {@code mayForm}, it is among the addresses, has the lowest of them, they have been {@code
   * stable} and number at least {@code requiredContacts}; otherwise only the others (this member
   * joins, it never forms). Empty when there is no one to ask.
   */
  static List<Address> seedNodes(
      Address self,
      boolean mayForm,
      List<InetAddress> resolved,
      int port,
      boolean stable,
      int requiredContacts) {
    List<InetAddress> sorted = resolved.stream().distinct().sorted(DnsLookup.ORDER).toList();
    Optional<InetAddress> selfIp =
        self.getPort().equals(Optional.of(port))
            ? self.getHost().flatMap(DnsSeeds::ipAddress)
            : Optional.empty(); // on another port this member is none of the name's members
    List<Address> out = new ArrayList<>();
    boolean forms =
        mayForm
            && stable
            && sorted.size() >= requiredContacts
            && selfIp.isPresent()
            && sorted.get(0).equals(selfIp.get());
    if (forms) {
      out.add(self);
    }
    for (InetAddress a : sorted) {
      if (!selfIp.equals(Optional.of(a))) {
        out.add(new Address(self.protocol(), self.system(), a.getHostAddress(), port));
      }
    }
    return out;
  }

  private static List<String> texts(List<InetAddress> addresses) {
    return addresses.stream().map(InetAddress::getHostAddress).toList();
  }
}
