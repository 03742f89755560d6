package org.tensorcache.lease;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;

/**
 * A lease shared by the actor systems of one JVM: taken when free or already this owner's, as the
 * database's row is. For tests of the decisions made with a lease, not of the lease.
 */
public final class MemoryLease extends Lease {
  /** Lease name to owner. */
  static final Map<String, String> HOLDERS = new ConcurrentHashMap<>();

  private final LeaseSettings settings;

  public MemoryLease(LeaseSettings settings, ExtendedActorSystem system) {
    this.settings = settings;
  }

  @Override
  public LeaseSettings getSettings() {
    return settings;
  }

  @Override
  public CompletionStage<Boolean> acquire() {
    String owner = settings.ownerName();
    String holder = HOLDERS.computeIfAbsent(settings.leaseName(), n -> owner);
    return CompletableFuture.completedFuture(holder.equals(owner));
  }

  @Override
  public CompletionStage<Boolean> acquire(Consumer<Optional<Throwable>> leaseLostCallback) {
    return acquire();
  }

  @Override
  public CompletionStage<Boolean> release() {
    return CompletableFuture.completedFuture(
        HOLDERS.remove(settings.leaseName(), settings.ownerName()));
  }

  @Override
  public boolean checkLease() {
    return settings.ownerName().equals(HOLDERS.get(settings.leaseName()));
  }
}
