package org.tensorcache.lease;

import java.time.Duration;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.DowningProvider;
import org.apache.pekko.cluster.sbr.SplitBrainResolverProvider;
import org.apache.pekko.cluster.sbr.SplitBrainResolverSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.coordination.lease.javadsl.LeaseProvider;
import scala.Option;
import scala.concurrent.duration.FiniteDuration;

/**
 * Pekko's Split Brain Resolver with lease-majority, and a member cut off one way downed alone
 * ({@link CutOffMemberDowning}). Configured as {@code pekko.cluster.downing-provider-class}, with
 * the resolver's own settings ({@code pekko.cluster.split-brain-resolver}, whose active-strategy
 * must be lease-majority) and {@code tensorcache.downing.cut-off-member-after}.
 */
public final class LeaseDowningProvider extends DowningProvider {
  private final ActorSystem system;
  private final SplitBrainResolverProvider resolver;

  /** The provider of {@code system}, made by Pekko's cluster. */
  public LeaseDowningProvider(ActorSystem system) {
    this.system = system;
    this.resolver = new SplitBrainResolverProvider(system);
    String strategy =
        system.settings().config().getString("pekko.cluster.split-brain-resolver.active-strategy");
    if (!strategy.equals("lease-majority")) {
      throw new IllegalArgumentException(
          "pekko.cluster.split-brain-resolver.active-strategy "
              + strategy
              + " invalid with "
              + LeaseDowningProvider.class.getName()
              + ", expected lease-majority");
    }
  }

  @Override
  public FiniteDuration downRemovalMargin() {
    return resolver.downRemovalMargin();
  }

  @Override
  public Option<Props> downingActorProps() {
    var settings =
        new SplitBrainResolverSettings(system.settings().config()).leaseMajoritySettings();
    // the resolver's own lease: LeaseProvider gives the same instance for the same name and owner
    Lease lease =
        LeaseProvider.get(system)
            .getLease(
                settings.safeLeaseName(system.name()),
                settings.leaseImplementation(),
                Cluster.get(system).selfUniqueAddress().address().hostPort());
    Duration after =
        system.settings().config().getDuration("tensorcache.downing.cut-off-member-after");
    Duration releaseAfter = Duration.ofNanos(settings.releaseAfter().toNanos());
    return Option.apply(
        CutOffMemberDowning.props(resolver.downingActorProps().get(), lease, after, releaseAfter));
  }
}
